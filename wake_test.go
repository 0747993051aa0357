package hikoutei_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/internal/wakehook"
	"github.com/hikoutei/hikoutei-go/natsserver"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

type wakeNote struct {
	ID   string `hikoutei:"id,pk"`
	Note string `hikoutei:"note,user"`
}

var wakeSecret = []byte("a wake secret shared with the Apps Script, 32+ bytes")

// openWoken opens a store whose pollers poll once an hour, with the wake
// handler mounted and the emulator's edit trigger calling it (as the
// first script did when legacy: naming no tab), its rows on the sheet.
func openWoken(t *testing.T, nats, legacy bool) (*hikoutei.Store, *hikouteitest.Sheet) {
	t.Helper()
	ctx := t.Context()
	sheet := hikouteitest.NewSheet(t)
	sync := sheet.SyncOptions()
	sync.Manual = false
	sync.PollingInterval, sync.FullScanInterval = time.Hour, time.Hour
	o := hikoutei.Options{Sync: sync, NoAdmin: true}
	if nats {
		o.NATSServer = natsserver.Embedded()
	}
	s, err := hikoutei.Open(ctx, t.TempDir(), o, hikoutei.Entity[wakeNote]("WakeNote"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	h, err := s.WakeHandler(hikoutei.WakeHookOptions{Secret: wakeSecret})
	if err != nil {
		t.Fatal(err)
	}
	hook := httptest.NewServer(h)
	t.Cleanup(hook.Close)
	sheet.Emulator.SetEditTrigger(&emulator.EditTrigger{URL: hook.URL, Secret: string(wakeSecret), Legacy: legacy})
	u := s.Begin()
	if err := u.Persist(&wakeNote{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	return s, sheet
}

// accepted returns a channel that receives once the log holds an
// accepted observation after seq from.
func accepted(ctx context.Context, t *testing.T, s *hikoutei.Store, from uint64) <-chan struct{} {
	t.Helper()
	got := make(chan struct{})
	go func() {
		err := s.Subscribe(ctx, "wake-test", func(_ context.Context, ev hikoutei.Event) error {
			if ev.Seq > from && ev.Type() == events.TypeObservationAccepted {
				close(got)
				return errStopWatching
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStopWatching) && ctx.Err() == nil {
			t.Errorf("subscription: %v", err)
		}
	}()
	return got
}

var errStopWatching = errors.New("seen")

// readsTyped waits until the read model shows the edit: a subscriber can
// hear an event before the read model has applied it.
func readsTyped(ctx context.Context, t *testing.T, s *hikoutei.Store) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		n, err := hikoutei.Get[wakeNote](ctx, s, "a")
		if err == nil && n.Note == "typed" {
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("after the wake the read model shows %+v, %v", n, err)
		}
	}
}

// With the edit trigger calling the wake hook, a person's edit becomes a
// committed event long before the poll interval (an hour): the wake, in
// process or over NATS, naming the edited tab or (the first script's)
// not, is the only way it can arrive within the bound.
func TestWakeHookBringsAPersonsEditInBeforeThePollInterval(t *testing.T) {
	for _, c := range []struct {
		name         string
		nats, legacy bool
	}{{"in_process", false, false}, {"nats", true, false}, {"in_process_first_script", false, true}} {
		name := c.name
		t.Run(name, func(t *testing.T) {
			s, sheet := openWoken(t, c.nats, c.legacy)
			head, err := s.ChainHead()
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			got := accepted(ctx, t, s, head.Seq)
			start := time.Now()
			if err := sheet.Person().Type("WakeNote_Input", cellOf(t, sheet, "WakeNote_Input", "note", 2), "typed"); err != nil {
				t.Fatal(err)
			}
			select {
			case <-got:
			case <-ctx.Done():
				t.Fatal("the edit was not committed within a minute; the poll interval is an hour")
			}
			t.Logf("%s: edit → committed event in %v", name, time.Since(start))
			readsTyped(ctx, t, s)
		})
	}
}

// A store whose pollers take no wake-ups has no wake handler, and a
// short secret is refused.
func TestWakeHandlerRefusesWithoutPollersOrWithAShortSecret(t *testing.T) {
	s, err := hikoutei.Open(t.Context(), t.TempDir(), hikoutei.Options{NoAdmin: true}, hikoutei.Entity[wakeNote]("WakeNote"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.WakeHandler(hikoutei.WakeHookOptions{Secret: wakeSecret}); !errors.Is(err, hikoutei.ErrSyncNotConfigured) {
		t.Fatalf("without sync: %v", err)
	}
	sheet := hikouteitest.NewSheet(t)
	sync := sheet.SyncOptions()
	sync.Manual = false
	s2, err := hikoutei.Open(t.Context(), t.TempDir(), hikoutei.Options{Sync: sync, NoAdmin: true}, hikoutei.Entity[wakeNote]("WakeNote"))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := s2.WakeHandler(hikoutei.WakeHookOptions{Secret: []byte("short")}); !errors.Is(err, hikoutei.ErrWakeSecretInvalid) {
		t.Fatalf("a short secret: %v", err)
	}
}

// A signed wake to a store whose poller does not run (provisioning its
// spreadsheet fails, the store closed) polls nothing, so it is refused
// with 503 wake_sync_not_running and the reason, and counted as such; an
// unsigned one still learns only that its signature is invalid.
func TestWakeHandlerSaysWhenNothingWouldPoll(t *testing.T) {
	sheet := hikouteitest.NewSheet(t, func(c *gsheets.Config) { c.Endpoint = "http://127.0.0.1:1" }) // nothing listens
	sync := sheet.SyncOptions()
	sync.Manual = false
	s, err := hikoutei.Open(t.Context(), t.TempDir(), hikoutei.Options{Sync: sync, NoAdmin: true}, hikoutei.Entity[wakeNote]("WakeNote"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var results []string
	h, err := s.WakeHandler(hikoutei.WakeHookOptions{Secret: wakeSecret, OnResult: func(r string) { results = append(results, r) }})
	if err != nil {
		t.Fatal(err)
	}
	send := func(secret []byte, nonce string) (int, string) {
		req := httptest.NewRequest(http.MethodPost, "/wake", nil)
		req.Header.Set(wakehook.Header, wakehook.Sign(secret, time.Now().Unix(), nonce))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code, strings.TrimSpace(w.Body.String())
	}
	if code, body := send([]byte("not the wake secret, but 32 bytes or more"), "wake-unsigned-000001"); code != 401 || body != `{"error":"wake_signature_invalid"}` {
		t.Fatalf("an unsigned wake: %d %s", code, body)
	}
	unreachable(t, s)
	if code, body := send(wakeSecret, "wake-unprovisioned-01"); code != 503 || body != `{"error":"wake_sync_not_running","reason":"sheets_unreachable"}` {
		t.Fatalf("a wake before the spreadsheet is provisioned: %d %s", code, body)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if code, body := send(wakeSecret, "wake-closed-00000001"); code != 503 || body != `{"error":"wake_sync_not_running","reason":"store_closed"}` {
		t.Fatalf("a wake to a closed store: %d %s", code, body)
	}
	if want := "wake_signature_invalid wake_sync_not_running wake_sync_not_running"; strings.Join(results, " ") != want {
		t.Fatalf("results %q, want %q", results, want)
	}
}

// unreachable waits until sync health says provisioning failed.
func unreachable(t *testing.T, s *hikoutei.Store) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if h := s.Health(); h.SyncHealth != nil && h.SyncHealth.Reason == hikoutei.ReasonUnreachable {
			return
		}
		select {
		case <-tick.C:
		case <-t.Context().Done():
			t.Fatal("provisioning never failed")
		}
	}
}
