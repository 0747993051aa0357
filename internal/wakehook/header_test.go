package wakehook

import (
	"bytes"
	"errors"
	"testing"
)

// The header parser takes exactly the signed form and refuses anything
// else with ErrMalformed; what parses signs back to itself.
func FuzzParseHeader(f *testing.F) {
	f.Add(Sign(testSecret, 1_800_000_000, "0123456789abcdef"))
	f.Add("n=0123456789abcdef,t=1,s=" + string(bytes.Repeat([]byte("0"), 64)))
	f.Add("t=1,t=2,n=x,s=y")
	f.Add("t=-1,n=0123456789abcdef,s=00")
	f.Add("")
	f.Fuzz(func(t *testing.T, v string) {
		r, err := ParseHeader(v)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("%q: %v", v, err)
			}
			return
		}
		if r.Unix < 0 || !validNonce(r.Nonce) || len(r.Sig) != 32 {
			t.Fatalf("%q parsed to %+v", v, r)
		}
		again, err := ParseHeader(Sign(testSecret, r.Unix, r.Nonce))
		if err != nil || again.Unix != r.Unix || again.Nonce != r.Nonce {
			t.Fatalf("%q: re-signed form %+v, %v", v, again, err)
		}
	})
}

func TestParseHeaderRefusals(t *testing.T) {
	sig := string(bytes.Repeat([]byte("a"), 64))
	for _, v := range []string{
		"t=1,n=0123456789abcdef",                             // no signature
		"t=1,n=0123456789abcdef,s=" + sig + ",x=1",           // an unknown key
		"t=01,n=0123456789abcdef,s=" + sig,                   // a leading zero
		"t=1,n=0123456789abcde,s=" + sig,                     // a short nonce
		"t=1,n=0123456789abcdef!,s=" + sig,                   // a nonce character
		"t=1,n=0123456789abcdef,s=" + sig[:62],               // a short signature
		"t=1,n=0123456789abcdef,n=0123456789abcdef,s=" + sig, // a repeated key
	} {
		if _, err := ParseHeader(v); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: %v", v, err)
		}
	}
	if _, err := ParseHeader("t=1,n=0123456789abcdef,s=" + sig); err != nil {
		t.Fatalf("a well-formed header: %v", err)
	}
}
