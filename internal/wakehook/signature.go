package wakehook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// MinSecretBytes is the shortest shared secret accepted.
const MinSecretBytes = 32

// scheme prefixes the signed message, so a signature made for anything
// else never verifies as a wake.
const scheme = "hikoutei-wake-v1"

// mac is HMAC-SHA256 keyed with secret over the signed message of a wake.
func mac(secret []byte, unix int64, nonce string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(scheme + "\n" + strconv.FormatInt(unix, 10) + "\n" + nonce))
	return m.Sum(nil)
}

// Sign returns the header value of a wake signed with secret: what the
// Apps Script sends (tests and tools use it).
func Sign(secret []byte, unix int64, nonce string) string {
	return "t=" + strconv.FormatInt(unix, 10) + ",n=" + nonce + ",s=" + hex.EncodeToString(mac(secret, unix, nonce))
}
