package bench

import (
	"bytes"
	"net/http"
	"sync"

	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// GoogleModelPath is the path of a ModelSwitch's switch: a POST there
// moves every spreadsheet into an emulator with Google's latency and
// quota model, which serves every later request.
const GoogleModelPath = "/bench/google-model"

// ModelSwitch serves an emulator without latency or quota (a benchmark's
// untimed setup: syncing 2 × 171,075 rows through Google's model would
// spend minutes waiting for its quota) until a POST to GoogleModelPath,
// then the same spreadsheets (emulator.Save, then Load) from an emulator
// with emulator.GoogleLatency and emulator.GoogleQuota: the measured part
// meets Google's model. The idle benchmark (row 11) switches after its
// setup.
type ModelSwitch struct {
	mu     sync.RWMutex
	emu    *emulator.Emulator
	h      http.Handler
	google bool
}

// NewModelSwitch serves a plain emulator (AutoCreate) until switched.
func NewModelSwitch() *ModelSwitch {
	e := emulator.New(emulator.Options{AutoCreate: true})
	return &ModelSwitch{emu: e, h: e.Handler()}
}

// Emulator is the emulator serving now.
func (m *ModelSwitch) Emulator() *emulator.Emulator {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.emu
}

// ServeHTTP serves the emulator, or switches it (POST GoogleModelPath:
// 204; a second switch is a no-op).
func (m *ModelSwitch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != GoogleModelPath {
		m.mu.RLock()
		h := m.h
		m.mu.RUnlock()
		h.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if err := m.Google(); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// Google moves every spreadsheet into an emulator with Google's latency
// and quota model, which serves from now on.
func (m *ModelSwitch) Google() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.google {
		return nil
	}
	var state bytes.Buffer
	if err := m.emu.Save(&state); err != nil {
		return err
	}
	g := emulator.New(emulator.GoogleModel(emulator.Options{AutoCreate: true}))
	if err := g.Load(&state); err != nil {
		return err
	}
	m.emu, m.h, m.google = g, g.Handler(), true
	return nil
}
