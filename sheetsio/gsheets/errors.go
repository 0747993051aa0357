package gsheets

import (
	"fmt"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

func newErr(code string, cause error, format string, args ...any) *sheetsio.Error {
	return &sheetsio.Error{Code: code, Msg: fmt.Sprintf(format, args...), Err: cause}
}
