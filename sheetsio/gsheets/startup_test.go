package gsheets

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"google.golang.org/api/googleapi"
)

// serviceAccountFile writes a syntactically valid service-account file with
// a freshly generated key (never a real credential).
func serviceAccountFile(t *testing.T, email string) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	body, _ := json.Marshal(map[string]string{
		"type": "service_account", "client_email": email, "project_id": "p", "private_key_id": "k",
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"token_uri":   "https://oauth2.googleapis.com/token",
	})
	return writeFile(t, string(body))
}

func TestPermissionDeniedNamesTheServiceAccount(t *testing.T) {
	const email = "hikoutei-sync@example-project.iam.gserviceaccount.com"
	p, err := New(context.Background(), Config{CredentialsFile: serviceAccountFile(t, email)})
	if err != nil {
		t.Fatal(err)
	}
	if p.ServiceAccountEmail() != email {
		t.Fatalf("email = %q", p.ServiceAccountEmail())
	}
	// The mapping the startup check applies to a 403 answer.
	err = p.readRejected("check", &googleapi.Error{Code: 403, Message: "The caller does not have permission"}, p.pool.accts[0].email)
	var e *sheetsio.Error
	if !errors.Is(err, sheetsio.ErrPermissionDenied) || !errors.As(err, &e) || !strings.Contains(e.Msg, email) {
		t.Fatalf("err = %v", err)
	}
	if err := p.readRejected("check", &googleapi.Error{Code: 401, Message: "Request had invalid authentication credentials."}, ""); !errors.Is(err, sheetsio.ErrCredentialsRejected) {
		t.Fatalf("401: %v", err)
	}
	if retry, _ := retryableRead(context.Background(), &googleapi.Error{Code: 403, Message: "denied"}); retry {
		t.Fatal("a structured 403 must not be retried")
	}
}

// A pool naming one service account twice (the same key file, or two keys
// of one account) is refused: Google's quota is per account, so its two
// budgets would spend twice the quota it has.
func TestPoolRefusesOneServiceAccountTwice(t *testing.T) {
	const email = "hikoutei-sync@example-project.iam.gserviceaccount.com"
	first := serviceAccountFile(t, email)
	for name, other := range map[string]string{"the same file": first, "another key": serviceAccountFile(t, email)} {
		_, err := New(context.Background(), Config{CredentialsFile: first,
			Pool: []Account{{CredentialsFile: serviceAccountFile(t, "other@example-project.iam.gserviceaccount.com")}, {CredentialsFile: other}}})
		if !errors.Is(err, sheetsio.ErrInvalidConfig) || !strings.Contains(err.Error(), "pool account 2 is the service account of account 0") ||
			strings.Contains(err.Error(), email) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
