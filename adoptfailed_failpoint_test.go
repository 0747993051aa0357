//go:build failpoints

package hikoutei

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/internal/failpoint"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// An adoption that failed after its second unit, in this process, is
// named by the store's Health (adopt_interrupted, the rows it created)
// while no adoption of the tab runs; adopting again finishes it and
// Health no longer names it.
func TestAnAdoptionThatFailedMidwayIsNamedByHealthUntilItIsRunAgain(t *testing.T) {
	emu := emulator.New(emulator.Options{AutoCreate: true})
	srv := httptest.NewServer(emu.Handler())
	defer srv.Close()
	writeStops(t, emu, 9) // 7 adopted (4 units of 2), 2 broken
	s, err := openStops(context.Background(), adoptChild{Dir: t.TempDir(), Endpoint: srv.URL})
	mustT(t, err)
	defer s.Close()
	if h := s.Health().Adoption; h != nil {
		t.Fatalf("Health().Adoption before any adoption: %v", h)
	}
	mustT(t, failpoint.Enable(failpoint.AdoptAfterUnit+"=panic@2"))
	func() {
		defer failpoint.Disable()
		defer func() { _ = recover() }()
		_, _ = adoptStops(context.Background(), s)
	}()
	if h := s.Health().Adoption; !errors.Is(h, ErrAdoptInterrupted) || !strings.Contains(h.Error(), `"Stops" (4 of 7 rows created)`) {
		t.Fatalf("Health().Adoption after the failed adoption: %v", h)
	}
	if _, err := adoptStops(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if h := s.Health().Adoption; h != nil {
		t.Fatalf("Health().Adoption once the adoption finished: %v", h)
	}
}
