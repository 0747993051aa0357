package natsbus

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/hikoutei/hikoutei-go/events"
)

type testPKI struct {
	caFile, certFile, keyFile string // client side PEM files
	serverTLS                 *tls.Config
}

// newTestPKI makes a CA, a server certificate for 127.0.0.1 and a client
// certificate, all short-lived and in dir.
func newTestPKI(t *testing.T, dir string) testPKI {
	t.Helper()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	now := time.Now()
	caKey := key()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hikoutei test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leaf := func(serial int64, usage x509.ExtKeyUsage) (*ecdsa.PrivateKey, []byte) {
		k := key()
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "leaf"},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return k, der
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	keyDER := func(k *ecdsa.PrivateKey) []byte {
		b, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	srvKey, srvDER := leaf(2, x509.ExtKeyUsageServerAuth)
	cliKey, cliDER := leaf(3, x509.ExtKeyUsageClientAuth)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return testPKI{
		caFile:   write("ca.pem", "CERTIFICATE", caDER),
		certFile: write("client.pem", "CERTIFICATE", cliDER),
		keyFile:  write("client-key.pem", "EC PRIVATE KEY", keyDER(cliKey)),
		serverTLS: &tls.Config{
			Certificates: []tls.Certificate{{Certificate: [][]byte{srvDER}, PrivateKey: srvKey}},
			ClientCAs:    pool,
			ClientAuth:   tls.RequireAndVerifyClientCert,
			MinVersion:   tls.VersionTLS12,
		},
	}
}

// TestURLWithTLSFiles: Config.TLSCAFile/TLSCertFile/TLSKeyFile reach a
// server that requires a verified client certificate (wake hint and
// JetStream mirror round trip through ReadMirrorWith); without the client
// certificate Start fails with ErrConnectFailed and ReadMirror with
// ErrMirrorReadFailed.
func TestURLWithTLSFiles(t *testing.T) {
	pki := newTestPKI(t, t.TempDir())
	_, url := startExternal(t, true, func(o *server.Options) {
		o.TLSConfig = pki.serverTLS
		o.TLSVerify = true
		o.TLSTimeout = 5
	})
	cfg := Config{Store: "tls", URL: url, TLSCAFile: pki.caFile, TLSCertFile: pki.certFile, TLSKeyFile: pki.keyFile,
		Mirror: MirrorConfig{Enabled: true, Memory: true}}
	b := startBus(t, cfg)
	ws, err := b.SubscribeWake(WakeKindDispatch)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Stop()
	b.WakeDispatch()
	recv(t, ws.C, "wake over TLS")

	evs := sampleEvents(1, 10)
	if err := b.Mirror(evs); err != nil {
		t.Fatal(err)
	}
	var got []events.Event
	if err := ReadMirrorWith(t.Context(), cfg, "HIKOUTEI_TLS", func(e events.Event) error {
		got = append(got, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sameRecords(t, got, evs)
	if err := ReadMirror(t.Context(), url, "HIKOUTEI_TLS", func(events.Event) error { return nil }); !errors.Is(err, ErrMirrorReadFailed) {
		t.Fatalf("ReadMirror without TLS files: %v, want ErrMirrorReadFailed", err)
	}

	if _, err := Start(t.Context(), Config{Store: "tls", URL: url, TLSCAFile: pki.caFile, ConnectTimeout: 2 * time.Second}); !errors.Is(err, ErrConnectFailed) {
		t.Fatalf("without client cert: %v, want ErrConnectFailed", err)
	}
}
