package natsbus

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

func TestConfigValidation(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]Config{
		"empty store":         {},
		"dot in store":        {Store: "a.b"},
		"wildcard in store":   {Store: "a*"},
		"space in store":      {Store: "a b"},
		"too long":            {Store: strings.Repeat("x", MaxStoreNameLen+1)},
		"listen and url":      {Store: "s", URL: "nats://127.0.0.1:4222", Listen: "127.0.0.1:0"},
		"bad listen":          {Store: "s", Listen: "nope"},
		"listen without host": {Store: "s", Listen: ":4222"},
		"mirror without dir":  {Store: "s", Mirror: MirrorConfig{Enabled: true}},
		"missing creds":       {Store: "s", URL: "nats://127.0.0.1:4222", CredsFile: filepath.Join(dir, "none.creds")},
		"cert without key":    {Store: "s", URL: "nats://127.0.0.1:4222", TLSCertFile: filepath.Join(dir, "c.pem")},
		"creds when embedded": {Store: "s", CredsFile: filepath.Join(dir, "x")},
		"bad stream name":     {Store: "s", URL: "nats://x", Mirror: MirrorConfig{Stream: "a.b"}},
		"wildcard subject":    {Store: "s", URL: "nats://x", Mirror: MirrorConfig{Subject: "a.>"}},
		"negative interval":   {Store: "s", WakeInterval: -time.Second},
	}
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			if b, err := Start(context.Background(), cfg); !errors.Is(err, ErrConfigInvalid) {
				if b != nil {
					b.Close()
				}
				t.Fatalf("got %v, want ErrConfigInvalid", err)
			}
		})
	}
	if got := SanitizeStore("my store.v2/é"); got != "my_store_v2__" || ValidateStore(got) != nil {
		t.Fatalf("SanitizeStore = %q", got)
	}
	if SanitizeStore("") != "default" {
		t.Fatal("empty name")
	}
}

func TestConnectFailedForUnreachableURL(t *testing.T) {
	srvDown, downURL := startExternal(t, false)
	srvDown.Shutdown()
	srvDown.WaitForShutdown()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if _, err := Start(ctx, Config{Store: "s", URL: downURL, ConnectTimeout: time.Second}); !errors.Is(err, ErrConnectFailed) {
		t.Fatalf("got %v, want ErrConnectFailed", err)
	}
	// With RetryOnFailedConnect the Bus starts disconnected and hints are
	// dropped, not blocked on.
	b := startBus(t, Config{Store: "s", URL: downURL, RetryOnFailedConnect: true})
	within(t, time.Second, "WakeDispatch while never connected", func() {
		for range 1000 {
			b.WakeDispatch()
		}
	})
	if b.Connected() {
		t.Fatal("connected to a stopped server")
	}
}

// TestWakeCoalescing: many WakeDispatch calls become at least one and far
// fewer messages; the Bus's own SubscribeWake channel fires.
func TestWakeCoalescing(t *testing.T) {
	b := startBus(t, Config{Store: "coalesce"})
	ws, err := b.SubscribeWake(WakeKindDispatch)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Stop()
	raw := inProc(t, b)
	var got atomic.Int64
	first := make(chan struct{}, 1)
	sub, err := raw.Subscribe("hikoutei.coalesce.wake.dispatch", func(*nats.Msg) {
		got.Add(1)
		select {
		case first <- struct{}{}:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	var polls atomic.Int64
	psub, _ := raw.Subscribe("hikoutei.coalesce.wake.poll", func(*nats.Msg) { polls.Add(1) })
	defer psub.Unsubscribe()
	if err := raw.Flush(); err != nil {
		t.Fatal(err)
	}

	const calls = 20000
	for range calls {
		b.WakeDispatch()
	}
	recv(t, first, "first wake message")
	recv(t, ws.C, "SubscribeWake hint")
	// Every request is either published or coalesced once the trailing
	// hint went out; then flush both ends so the count is final.
	waitUntil(t, "all wake requests accounted for", func() bool {
		s := b.Stats()
		return s.WakesPublished+s.WakesCoalesced+s.WakesDropped == s.WakesRequested
	})
	if err := b.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := raw.Flush(); err != nil {
		t.Fatal(err)
	}
	n := got.Load()
	s := b.Stats()
	t.Logf("%d calls -> %d messages (stats %+v)", calls, n, s)
	if n < 1 || n > calls/20 {
		t.Fatalf("%d WakeDispatch calls produced %d messages; want >= 1 and <= %d", calls, n, calls/20)
	}
	if uint64(n) != s.WakesPublished || s.WakesRequested != calls {
		t.Fatalf("received %d, stats %+v", n, s)
	}
	if polls.Load() != 0 {
		t.Fatalf("wake.poll got %d messages from WakeDispatch", polls.Load())
	}
}

// TestWakeTrailingHintAndOnWake: a hint raised after one was consumed is
// delivered too (no lost trailing hint); OnWake calls fn per hint burst and
// stops after stop.
func TestWakeTrailingHintAndOnWake(t *testing.T) {
	b := startBus(t, Config{Store: "trail"})
	calls := make(chan struct{}, 16)
	stop, err := b.OnWake(WakeKindPoll, func() { calls <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	if err := b.nc.Flush(); err != nil { // subscription registered
		t.Fatal(err)
	}
	for range 3 {
		b.WakePoll()
		recv(t, calls, "OnWake call")
	}
	stop()
	stop() // idempotent
	if _, err := b.OnWake("bogus", func() {}); !errors.Is(err, ErrConfigInvalid) {
		t.Fatalf("unknown kind: %v", err)
	}
}

func conflictSample() ConflictNotification {
	return ConflictNotification{
		ConflictID: "c-01", Entity: "Airport", ID: "LAX", Field: "name",
		CanonicalRevision: 7, CandidateEpoch: 2,
		At:             time.Date(2026, 11, 30, 11, 34, 22, 0, time.FixedZone("JST", 9*3600)),
		CandidateValue: "Los Angeles Intl (typo)", CanonicalValue: "Los Angeles International",
	}
}

// subscribeJSON collects raw JSON objects published on subject.
func subscribeJSON(t *testing.T, nc *nats.Conn, subject string) <-chan map[string]any {
	t.Helper()
	c := make(chan map[string]any, 16)
	sub, err := nc.Subscribe(subject, func(m *nats.Msg) {
		var v map[string]any
		if err := json.Unmarshal(m.Data, &v); err != nil {
			t.Errorf("%s: not JSON: %v: %s", m.Subject, err, m.Data)
			return
		}
		v["_subject"] = m.Subject
		c <- v
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return c
}

func keys(m map[string]any) string {
	var ks []string
	for k := range m {
		if k != "_subject" {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return strings.Join(ks, ",")
}

// TestConflictNotificationsSchemaWithoutValues: a plain nats.go subscriber
// gets conflict.opened and conflict.resolved JSON with exactly the
// documented keys, "at" in RFC 3339 UTC, and no values by default; the
// Bus's SubscribeConflicts decodes both.
func TestConflictNotificationsSchemaWithoutValues(t *testing.T) {
	b := startBus(t, Config{Store: "demo"})
	raw := subscribeJSON(t, inProc(t, b), "hikoutei.demo.conflict.>")
	typed := make(chan ConflictNotification, 4)
	stop, err := b.SubscribeConflicts(func(n ConflictNotification) { typed <- n })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := b.nc.Flush(); err != nil {
		t.Fatal(err)
	}

	n := conflictSample()
	if err := b.PublishConflictOpened(n); err != nil {
		t.Fatal(err)
	}
	n.Resolution, n.Actor = ResolutionUseSheet, ActorSheet
	n.CandidateEpoch = 3
	if err := b.PublishConflictResolved(n); err != nil {
		t.Fatal(err)
	}

	base := "at,candidate_epoch,canonical_revision,conflict_id,entity,field,id,kind,schema,store"
	opened := recv(t, raw, SuffixConflictOpened)
	if opened["_subject"] != "hikoutei.demo."+SuffixConflictOpened || keys(opened) != base {
		t.Fatalf("opened: subject %v keys %s", opened["_subject"], keys(opened))
	}
	want := map[string]any{"schema": float64(ConflictSchemaVersion), "kind": SuffixConflictOpened, "store": "demo", "conflict_id": "c-01",
		"entity": "Airport", "id": "LAX", "field": "name", "canonical_revision": 7.0, "candidate_epoch": 2.0,
		"at": "2026-11-30T02:34:22Z"}
	for k, v := range want {
		if opened[k] != v {
			t.Fatalf("opened[%s] = %#v, want %#v", k, opened[k], v)
		}
	}
	resolved := recv(t, raw, SuffixConflictResolved)
	if resolved["_subject"] != "hikoutei.demo."+SuffixConflictResolved || keys(resolved) != "actor,at,candidate_epoch,canonical_revision,conflict_id,entity,field,id,kind,resolution,schema,store" {
		t.Fatalf("resolved: subject %v keys %s", resolved["_subject"], keys(resolved))
	}
	if resolved["resolution"] != "use_sheet" || resolved["actor"] != "sheet" || resolved["schema"] != 2.0 || resolved["kind"] != SuffixConflictResolved || resolved["candidate_epoch"] != 3.0 {
		t.Fatalf("resolved = %v", resolved)
	}
	if at, err := time.Parse(time.RFC3339, resolved["at"].(string)); err != nil || at.Location() != time.UTC {
		t.Fatalf("at %v: %v", resolved["at"], err)
	}

	t1 := recv(t, typed, "typed opened")
	t2 := recv(t, typed, "typed resolved")
	if t1.Kind != KindConflictOpened || t2.Kind != KindConflictResolved || t1.Schema != 2 || t2.Resolution != ResolutionUseSheet || t2.Actor != ActorSheet ||
		t1.CandidateValue != nil || !t1.At.Equal(n.At) || t1.Store != "demo" {
		t.Fatalf("typed: %+v / %+v", t1, t2)
	}
}

// TestConflictNotificationsIncludeValues: with IncludeValues the two values
// are present.
func TestConflictNotificationsIncludeValues(t *testing.T) {
	b := startBus(t, Config{Store: "pii", IncludeValues: true})
	raw := subscribeJSON(t, inProc(t, b), "hikoutei.pii."+SuffixConflictOpened)
	if err := b.PublishConflictOpened(conflictSample()); err != nil {
		t.Fatal(err)
	}
	got := recv(t, raw, SuffixConflictOpened)
	if got["candidate_value"] != "Los Angeles Intl (typo)" || got["canonical_value"] != "Los Angeles International" {
		t.Fatalf("values missing: %v", got)
	}
}

// TestConflictNotificationInvalid: content errors are the only errors the
// publishers return.
func TestConflictNotificationInvalid(t *testing.T) {
	b := startBus(t, Config{Store: "inv", IncludeValues: true})
	mod := func(f func(*ConflictNotification)) ConflictNotification {
		n := conflictSample()
		f(&n)
		return n
	}
	for name, err := range map[string]error{
		"no id":                       b.PublishConflictOpened(mod(func(n *ConflictNotification) { n.ConflictID = "" })),
		"opened with resolution":      b.PublishConflictOpened(mod(func(n *ConflictNotification) { n.Resolution = "x" })),
		"resolved without resolution": b.PublishConflictResolved(conflictSample()),
		"other store":                 b.PublishConflictOpened(mod(func(n *ConflictNotification) { n.Store = "other" })),
		"unencodable value":           b.PublishConflictOpened(mod(func(n *ConflictNotification) { n.CandidateValue = func() {} })),
	} {
		if !errors.Is(err, ErrNotificationInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if s := b.Stats(); s.NotificationsPublished+s.NotificationsDropped+s.NotificationsBuffered != 0 {
		t.Fatalf("an invalid notification was queued: %+v", s)
	}
}

// TestListenExternalSubscriber: Config.Listen "127.0.0.1:0" opens a
// loopback listener; a TCP client at ListenURL receives hints.
func TestListenExternalSubscriber(t *testing.T) {
	b := startBus(t, Config{Store: "listen", Listen: "127.0.0.1:0"})
	url := b.ListenURL()
	if !strings.HasPrefix(url, "nats://127.0.0.1:") || strings.HasSuffix(url, ":0") || b.ListenMode() != ListenAuthenticated {
		t.Fatalf("ListenURL = %q, mode %s", url, b.ListenMode())
	}
	nc := clientConn(t, b)
	c := make(chan struct{}, 1)
	sub, _ := nc.Subscribe(b.Subject(SuffixWakeDispatch), func(*nats.Msg) {
		select {
		case c <- struct{}{}:
		default:
		}
	})
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	b.WakeDispatch()
	recv(t, c, "wake over TCP")
	if nl := startBus(t, Config{Store: "nolisten"}); nl.ListenURL() != "" || nl.ListenMode() != ListenOff {
		t.Fatal("embedded without Listen reports a listener")
	}
}

// TestURLSecondServer: a second embedded server with a loopback port
// stands in for an external deployment; two Buses connected via
// Config.URL (like two processes) exchange wake hints and conflict
// notifications, and a plain client there sees them too.
func TestURLSecondServer(t *testing.T) {
	_, url := startExternal(t, false)
	pub := startBus(t, Config{Store: "ext", URL: url})
	sub := startBus(t, Config{Store: "ext", URL: url})
	if pub.Embedded() || pub.ListenURL() != "" {
		t.Fatal("URL bus claims an embedded server")
	}
	ws, err := sub.SubscribeWake(WakeKindDispatch)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Stop()
	notes := make(chan ConflictNotification, 2)
	stop, err := sub.SubscribeConflicts(func(n ConflictNotification) { notes <- n })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	raw := subscribeJSON(t, tcpConn(t, url), "hikoutei.ext.conflict.*")
	if err := sub.nc.Flush(); err != nil {
		t.Fatal(err)
	}

	pub.WakeDispatch()
	recv(t, ws.C, "wake from the other bus")
	if err := pub.PublishConflictOpened(conflictSample()); err != nil {
		t.Fatal(err)
	}
	if n := recv(t, notes, "notification from the other bus"); n.ConflictID != "c-01" || n.Kind != KindConflictOpened {
		t.Fatalf("got %+v", n)
	}
	if m := recv(t, raw, "raw notification"); m["conflict_id"] != "c-01" {
		t.Fatalf("raw got %v", m)
	}
}

// TestNATSDownNeverBlocks: with the server stopped mid-run (external via
// URL, and the embedded one), WakeDispatch, WakePoll and the conflict
// publishers return promptly without error, Mirror fails fast with
// ErrUnavailable, and Close does not hang.
func TestNATSDownNeverBlocks(t *testing.T) {
	t.Run("url", func(t *testing.T) {
		srv, url := startExternal(t, true)
		b := startBus(t, Config{Store: "down", URL: url, Mirror: MirrorConfig{Enabled: true, Memory: true}})
		if err := b.Mirror(sampleEvents(1, 3)); err != nil {
			t.Fatal(err)
		}
		b.WakeDispatch()
		srv.Shutdown()
		srv.WaitForShutdown()
		waitUntil(t, "disconnect noticed", func() bool { return !b.Connected() && b.Stats().Disconnects > 0 })
		assertNonBlocking(t, b)
	})
	t.Run("embedded", func(t *testing.T) {
		b := startBus(t, Config{Store: "down2", Mirror: MirrorConfig{Enabled: true}, StoreDir: t.TempDir()})
		b.srv.Shutdown() // waits until it has stopped
		waitUntil(t, "disconnect noticed", func() bool { return !b.Connected() && b.Stats().Disconnects > 0 })
		assertNonBlocking(t, b)
	})
}

func assertNonBlocking(t *testing.T, b *Bus) {
	t.Helper()
	within(t, 2*time.Second, "publishing while NATS is down", func() {
		for i := range 5000 {
			b.WakeDispatch()
			b.WakePoll()
			if i%10 == 0 {
				if err := b.PublishConflictOpened(conflictSample()); err != nil {
					t.Errorf("PublishConflictOpened: %v", err)
				}
			}
		}
		n := conflictSample()
		n.Resolution = "acknowledge_system"
		if err := b.PublishConflictResolved(n); err != nil {
			t.Errorf("PublishConflictResolved: %v", err)
		}
		if err := b.Mirror(sampleEvents(4, 5)); !errors.Is(err, ErrUnavailable) {
			t.Errorf("Mirror while down: %v, want ErrUnavailable", err)
		}
	})
	waitUntil(t, "hints dropped while down", func() bool { return b.Stats().WakesDropped > 0 })
	within(t, 2*DefaultCloseTimeout, "Close while NATS is down", func() { _ = b.Close() })
	s := b.Stats()
	t.Logf("stats after outage: %+v", s)
	if s.Disconnects == 0 || s.Connected {
		t.Fatalf("stats %+v", s)
	}
}

// TestCloseThenUse: Close is idempotent; afterwards hints and notifications
// are silent no-ops and the rest returns ErrClosed.
func TestCloseThenUse(t *testing.T) {
	b := startBus(t, Config{Store: "closed", Mirror: MirrorConfig{Enabled: true}, StoreDir: t.TempDir()})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	within(t, time.Second, "use after Close", func() {
		b.WakeDispatch()
		if err := b.PublishConflictOpened(conflictSample()); err != nil {
			t.Errorf("publish after close: %v", err)
		}
	})
	if _, err := b.SubscribeWake(WakeKindDispatch); !errors.Is(err, ErrClosed) {
		t.Fatalf("SubscribeWake: %v", err)
	}
	if _, err := b.SubscribeConflicts(func(ConflictNotification) {}); !errors.Is(err, ErrClosed) {
		t.Fatalf("SubscribeConflicts: %v", err)
	}
	if err := b.Mirror(sampleEvents(1, 1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Mirror: %v", err)
	}
	if err := startBus(t, Config{Store: "nomirror"}).Mirror(sampleEvents(1, 1)); !errors.Is(err, ErrMirrorDisabled) {
		t.Fatalf("Mirror disabled: %v", err)
	}
}

func TestStartWithoutURLOrLinkedServerFailsServerNotLinked(t *testing.T) {
	b, err := Start(t.Context(), Config{Store: "nolink"})
	if !errors.Is(err, ErrServerNotLinked) {
		if b != nil {
			b.Close()
		}
		t.Fatalf("Start without URL or Server: %v, want nats_server_not_linked", err)
	}
}
