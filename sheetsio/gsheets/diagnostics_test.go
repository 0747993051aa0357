package gsheets

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

func wantCode(t *testing.T, err error, sentinel *sheetsio.Error) {
	t.Helper()
	var e *sheetsio.Error
	if !errors.Is(err, sentinel) || !errors.As(err, &e) {
		t.Fatalf("want %s, got %v", sentinel.Code, err)
	}
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCredentialsDiagnostics(t *testing.T) {
	_, err := New(context.Background(), Config{})
	wantCode(t, err, sheetsio.ErrCredentialsMissing)
	_, err = New(context.Background(), Config{CredentialsFile: filepath.Join(t.TempDir(), "nope.json")})
	wantCode(t, err, sheetsio.ErrCredentialsMissing)
	_, err = New(context.Background(), Config{CredentialsFile: writeFile(t, "not json {")})
	wantCode(t, err, sheetsio.ErrCredentialsNotJSON)
	secret := "-----BEGIN PRIVATE KEY-----SECRETSECRET"
	_, err = New(context.Background(), Config{CredentialsFile: writeFile(t, `{"type":"service_account","private_key":"`+secret+`"}`)})
	wantCode(t, err, sheetsio.ErrCredentialsIncomplete)
	if !strings.Contains(err.Error(), "client_email") || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("diagnostic must name the missing field, not values: %v", err)
	}
	_, err = New(context.Background(), Config{CredentialsFile: writeFile(t, `{"type":"authorized_user","client_email":"a@b","private_key":"k"}`)})
	wantCode(t, err, sheetsio.ErrCredentialsIncomplete)
}
