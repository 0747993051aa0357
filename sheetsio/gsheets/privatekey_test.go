package gsheets

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// A service-account file whose private_key is not a key is refused at
// New with credentials_rejected, naming no key material: it was accepted,
// then every token request failed locally and the check was retried as
// sheets_read_unavailable, and provisioning retried it forever.
func TestUnparseablePrivateKeyIsCredentialsRejectedAtNew(t *testing.T) {
	for _, key := range []string{"-----BEGIN PRIVATE KEY-----\nZ2FyYmFnZVNFQ1JFVA==\n-----END PRIVATE KEY-----\n", "garbageSECRET"} {
		body, _ := json.Marshal(map[string]string{"type": "service_account", "client_email": "a@b.iam.gserviceaccount.com", "private_key": key})
		_, err := New(context.Background(), Config{CredentialsFile: writeFile(t, string(body))})
		wantCode(t, err, sheetsio.ErrCredentialsRejected)
		if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "Z2Fy") {
			t.Fatalf("the diagnostic carries key material: %v", err)
		}
	}
	if _, err := New(context.Background(), Config{CredentialsFile: serviceAccountFile(t, "a@b.iam.gserviceaccount.com")}); err != nil {
		t.Fatalf("a real PKCS#8 key is refused: %v", err)
	}
}
