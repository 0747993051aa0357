package emulator

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"
)

// EditTrigger models an installable Apps Script onEdit trigger that calls
// a wake hook the way the script in the docs (docs/wake-hook.md) does:
// after each edit a person makes to cell values (Type, TypeFormula,
// LookAndType, PasteRow, ClearTab), asynchronously and after the edit is
// visible, one POST to URL with the header
//
//	X-Hikoutei-Wake: t=<unix seconds>,n=<nonce>,s=<hex HMAC-SHA256>
//
// signed with Secret over "hikoutei-wake-v1\n<t>\n<n>" (t from the
// emulator's Clock, a random nonce). Structural changes (inserting,
// deleting or sorting rows, tabs) are onChange in Google and call
// nothing; neither do API writes, which fire no trigger in Google.
type EditTrigger struct {
	URL    string
	Secret string
	// Client makes the calls (nil: http.DefaultClient); each call gives
	// up after 30 s.
	Client *http.Client
	// Called, when set, hears each call's outcome: the response status,
	// or 0 and the transport error.
	Called func(status int, err error)
}

// SetEditTrigger installs t for every spreadsheet's person edits (nil
// removes it), replacing Options.EditTrigger.
func (e *Emulator) SetEditTrigger(t *EditTrigger) {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	e.trigger = t
}

// edited runs the edit trigger for a person's edit that succeeded.
func (e *Emulator) edited(err error) error {
	if err != nil {
		return err
	}
	e.ctl.Lock()
	t := e.trigger
	e.ctl.Unlock()
	if t != nil {
		e.calls.Add(1)
		go func() {
			defer e.calls.Done()
			t.call(e.clock.Now())
		}()
	}
	return nil
}

// call is one run of the trigger: a signed POST, its outcome reported.
func (t *EditTrigger) call(now time.Time) {
	status, err := t.post(now)
	if t.Called != nil {
		t.Called(status, err)
	}
}

func (t *EditTrigger) post(now time.Time) (int, error) {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return 0, err
	}
	ts, nonce := strconv.FormatInt(now.Unix(), 10), hex.EncodeToString(raw[:])
	m := hmac.New(sha256.New, []byte(t.Secret))
	m.Write([]byte("hikoutei-wake-v1\n" + ts + "\n" + nonce))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("X-Hikoutei-Wake", "t="+ts+",n="+nonce+",s="+hex.EncodeToString(m.Sum(nil)))
	c := t.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
