package wakehook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// MinSecretBytes is the shortest shared secret accepted.
const MinSecretBytes = 32

// scheme prefixes the signed message of a wake without a body, schemeBody
// that of a wake naming a sheet in its body, so a signature made for
// anything else never verifies as a wake, and a body added to a wake
// signed without one fails the signature.
const (
	scheme     = "hikoutei-wake-v1"
	schemeBody = "hikoutei-wake-v2"
)

// mac is HMAC-SHA256 keyed with secret over the signed message of a wake:
// "hikoutei-wake-v1\n<t>\n<n>" without a body, else
// "hikoutei-wake-v2\n<t>\n<n>\n<body>".
func mac(secret []byte, unix int64, nonce string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	if len(body) == 0 {
		m.Write([]byte(scheme + "\n" + strconv.FormatInt(unix, 10) + "\n" + nonce))
		return m.Sum(nil)
	}
	m.Write([]byte(schemeBody + "\n" + strconv.FormatInt(unix, 10) + "\n" + nonce + "\n"))
	m.Write(body)
	return m.Sum(nil)
}

// Sign returns the header value of a wake without a body signed with
// secret: what the first Apps Script sends (tests and tools use it).
func Sign(secret []byte, unix int64, nonce string) string { return SignBody(secret, unix, nonce, nil) }

// SignBody returns the header value of a wake whose body is body, signed
// with secret: what the Apps Script of docs/wake-hook.md sends with the
// body {"sheet": <sheetId>}.
func SignBody(secret []byte, unix int64, nonce string, body []byte) string {
	return "t=" + strconv.FormatInt(unix, 10) + ",n=" + nonce + ",s=" + hex.EncodeToString(mac(secret, unix, nonce, body))
}
