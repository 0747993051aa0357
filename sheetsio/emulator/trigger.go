package emulator

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// EditTrigger models an installable Apps Script onEdit trigger that calls
// a wake hook the way the script in the docs (docs/wake-hook.md) does:
// after each edit a person makes to cell values (Type, TypeFormula,
// LookAndType, PasteRow, ClearTab), asynchronously and after the edit is
// visible, one POST to URL with the body {"sheet":<sheetId>} naming the
// edited tab and the header
//
//	X-Hikoutei-Wake: t=<unix seconds>,n=<nonce>,s=<hex HMAC-SHA256>
//
// signed with Secret over "hikoutei-wake-v2\n<t>\n<n>\n<body>" (t from
// the emulator's Clock, a random nonce). With Legacy it calls as the
// first script did: no body, signed over "hikoutei-wake-v1\n<t>\n<n>".
// Structural changes (inserting, deleting or sorting rows, tabs) are
// onChange in Google and call nothing; neither do API writes, which fire
// no trigger in Google.
type EditTrigger struct {
	URL    string
	Secret string
	// Legacy sends the first script's wake, which names no tab.
	Legacy bool
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

// edited runs the edit trigger for a person's edit of the tab titled
// tab of spreadsheet book that succeeded.
func (e *Emulator) edited(book, tab string, err error) error {
	if err != nil {
		return err
	}
	e.ctl.Lock()
	t := e.trigger
	e.ctl.Unlock()
	if t != nil {
		id := e.sheetIDOf(book, tab)
		e.calls.Add(1)
		go func() {
			defer e.calls.Done()
			t.call(e.clock.Now(), id)
		}()
	}
	return nil
}

// sheetIDOf is the sheetId of the tab titled tab (-1: none).
func (e *Emulator) sheetIDOf(book, tab string) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if b, ok := e.books[book]; ok {
		if s := b.sheetByTitle(tab); s != nil {
			return s.ID
		}
	}
	return -1
}

// call is one run of the trigger for an edit of sheet (its sheetId): a
// signed POST, its outcome reported.
func (t *EditTrigger) call(now time.Time, sheet int64) {
	status, err := t.post(now, sheet)
	if t.Called != nil {
		t.Called(status, err)
	}
}

// wake is the body and the signed message of one wake: the first
// script's when legacy or the sheet is unknown (no body), else naming
// the sheet.
func wake(ts, nonce string, sheet int64, legacy bool) (body, msg string) {
	if legacy || sheet < 0 {
		return "", "hikoutei-wake-v1\n" + ts + "\n" + nonce
	}
	body = `{"sheet":` + strconv.FormatInt(sheet, 10) + `}`
	return body, "hikoutei-wake-v2\n" + ts + "\n" + nonce + "\n" + body
}

func (t *EditTrigger) post(now time.Time, sheet int64) (int, error) {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return 0, err
	}
	ts, nonce := strconv.FormatInt(now.Unix(), 10), hex.EncodeToString(raw[:])
	body, msg := wake(ts, nonce, sheet, t.Legacy)
	m := hmac.New(sha256.New, []byte(t.Secret))
	m.Write([]byte(msg))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
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
