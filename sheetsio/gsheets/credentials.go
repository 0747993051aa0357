package gsheets

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"strings"

	"cloud.google.com/go/auth"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// ServiceAccount is the parsed part of a service-account credentials file
// the provider needs for diagnostics. JSON is the raw file content handed to
// the Google client; it must never be logged.
type ServiceAccount struct {
	ClientEmail string
	JSON        []byte
}

// LoadServiceAccount reads and checks a service-account credentials file.
// Errors (*Error): CodeCredentialsMissing when path is empty or the file does
// not exist/cannot be read; CodeCredentialsNotJSON when it is not a JSON
// object; CodeCredentialsIncomplete when type is not "service_account" or
// client_email/private_key is missing; CodeCredentialsRejected when
// private_key is not a private key (no token could ever be signed with
// it). Messages name the missing fields, never their values.
func LoadServiceAccount(path string) (*ServiceAccount, error) {
	sa, err := loadServiceAccount(path)
	if err != nil {
		return nil, err
	}
	return sa, nil
}

// loadServiceAccount is LoadServiceAccount with its error typed.
func loadServiceAccount(path string) (*ServiceAccount, *sheetsio.Error) {
	if strings.TrimSpace(path) == "" {
		return nil, newErr(sheetsio.CodeCredentialsMissing, nil, "no service-account credentials file configured")
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, newErr(sheetsio.CodeCredentialsMissing, nil, "credentials file does not exist")
		}
		return nil, newErr(sheetsio.CodeCredentialsMissing, nil, "credentials file cannot be read")
	}
	return parseServiceAccount(raw)
}

func parseServiceAccount(raw []byte) (*ServiceAccount, *sheetsio.Error) {
	var f map[string]any
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, newErr(sheetsio.CodeCredentialsNotJSON, nil, "credentials file is not a JSON object")
	}
	var missing []string
	for _, k := range []string{"type", "client_email", "private_key"} {
		if s, _ := f[k].(string); strings.TrimSpace(s) == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, newErr(sheetsio.CodeCredentialsIncomplete, nil, "credentials file lacks %s", strings.Join(missing, ", "))
	}
	if f["type"] != "service_account" {
		return nil, newErr(sheetsio.CodeCredentialsIncomplete, nil, "credentials type is not service_account")
	}
	if key, _ := f["private_key"].(string); !privateKeyParses(key) {
		return nil, newErr(sheetsio.CodeCredentialsRejected, nil, "private_key is not a private key (PEM PKCS#8, PKCS#1 or EC): no token can be signed with it")
	}
	email, _ := f["client_email"].(string)
	return &ServiceAccount{ClientEmail: email, JSON: raw}, nil
}

// privateKeyParses reports whether key is a private key in a form Google's
// auth library signs with (PEM or bare DER; PKCS#8, PKCS#1 or EC). One
// that is not fails every token request before it is sent, so it is
// refused here, once, rather than retried as an unreachable API.
func privateKeyParses(key string) bool {
	der := []byte(key)
	if block, _ := pem.Decode(der); block != nil {
		der = block.Bytes
	}
	if _, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		return true
	}
	if _, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return true
	}
	_, err := x509.ParseECPrivateKey(der)
	return err == nil
}

// credentialsRejected reports whether Google refused the credentials:
// its token endpoint refused to issue a token (400 invalid_grant for a
// key it does not know or a bad JWT signature, 401 unauthorized_client),
// or the API answered 401. Retrying cannot help.
func credentialsRejected(err error) bool {
	return tokenRefused(err) != 0 || statusOf(err) == http.StatusUnauthorized
}

// tokenRefused is the HTTP status with which the OAuth token endpoint
// refused to issue a token (0: err is no such refusal). Timeouts, 429
// and 5xx are not refusals: they may pass.
func tokenRefused(err error) int {
	var aerr *auth.Error
	if !errors.As(err, &aerr) || aerr.Response == nil {
		return 0
	}
	s := aerr.Response.StatusCode
	if s < 400 || s >= 500 || s == http.StatusRequestTimeout || s == http.StatusTooManyRequests {
		return 0
	}
	return s
}
