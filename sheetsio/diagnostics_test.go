package sheetsio

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func wantCode(t *testing.T, err error, sentinel *Error) {
	t.Helper()
	var e *Error
	if !errors.Is(err, sentinel) || !errors.As(err, &e) {
		t.Fatalf("want %s, got %v", sentinel.Code, err)
	}
}

func TestParseSpreadsheetURL(t *testing.T) {
	const id = "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms"
	good := []string{
		"https://docs.google.com/spreadsheets/d/" + id + "/edit#gid=0",
		"https://docs.google.com/spreadsheets/d/" + id,
		"https://docs.google.com/spreadsheets/d/" + id + "/edit?usp=sharing",
		" " + id + " ",
	}
	for _, u := range good {
		got, err := ParseSpreadsheetURL(u)
		if err != nil || got != id {
			t.Fatalf("%q -> %q, %v", u, got, err)
		}
	}
	bad := []string{"", "http://docs.google.com/spreadsheets/d/" + id, "https://evil.example/spreadsheets/d/" + id,
		"https://docs.google.com/document/d/" + id, "https://docs.google.com/spreadsheets/d/", "not a url"}
	for _, u := range bad {
		_, err := ParseSpreadsheetURL(u)
		wantCode(t, err, ErrInvalidSpreadsheetURL)
		if u != "" && strings.Contains(err.Error(), u) {
			t.Fatalf("error repeats the input: %v", err)
		}
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
	wantCode(t, err, ErrCredentialsMissing)
	_, err = New(context.Background(), Config{CredentialsFile: filepath.Join(t.TempDir(), "nope.json")})
	wantCode(t, err, ErrCredentialsMissing)
	_, err = New(context.Background(), Config{CredentialsFile: writeFile(t, "not json {")})
	wantCode(t, err, ErrCredentialsNotJSON)
	secret := "-----BEGIN PRIVATE KEY-----SECRETSECRET"
	_, err = New(context.Background(), Config{CredentialsFile: writeFile(t, `{"type":"service_account","private_key":"`+secret+`"}`)})
	wantCode(t, err, ErrCredentialsIncomplete)
	if !strings.Contains(err.Error(), "client_email") || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("diagnostic must name the missing field, not values: %v", err)
	}
	_, err = New(context.Background(), Config{CredentialsFile: writeFile(t, `{"type":"authorized_user","client_email":"a@b","private_key":"k"}`)})
	wantCode(t, err, ErrCredentialsIncomplete)
}
