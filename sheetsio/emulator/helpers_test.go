package emulator

import (
	"net/url"
	"strconv"
)

func itoa(i int) string { return strconv.Itoa(i) }

func unescape(s string) string {
	u, err := url.PathUnescape(s)
	if err != nil {
		return s
	}
	return u
}
