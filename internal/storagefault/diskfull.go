package storagefault

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/doctor"
)

// Note is the entity the storage runs commit.
type Note struct {
	ID   string `hikoutei:"id,pk"`
	Text string `hikoutei:"text"`
}

// NoteDef declares Note.
var NoteDef = hikoutei.Entity[Note]("Note")

// DiskFullResult is what one disk-full run saw.
type DiskFullResult struct {
	Medium  Medium         `json:"medium"`
	Acked   int            `json:"acked"`   // commits answered durable (nil or read_model_behind)
	Refused int            `json:"refused"` // commits answered with any other error
	Codes   map[string]int `json:"codes"`   // refused commits by error code
	// Unreported counts refused commits after which Health().Local was
	// still nil: a failure the operator could not see.
	Unreported int      `json:"unreported"`
	Lost       []string `json:"lost"`   // acknowledged ids missing after recovery
	Doctor     []string `json:"doctor"` // doctor's failed findings after recovery
	// Appeared are ids of refused commits found after recovery: a refusal
	// that was not "nothing committed".
	Appeared []string `json:"appeared"`
}

// maxRefused ends the filling phase of a disk-full run; maxAttempts
// bounds it when commits are never refused.
const (
	maxRefused  = 200
	maxAttempts = 50_000
)

// RunDiskFull fills a small filesystem of size bytes at dir with commits
// until maxRefused of them were refused, grows it (space freed), commits
// once more without reopening, closes, reopens and checks every
// acknowledged commit is there and doctor finds nothing wrong.
func RunDiskFull(dir string, size int64, seed uint64) (DiskFullResult, error) {
	disk, err := NewSmallDisk(dir, size)
	if err != nil {
		return DiskFullResult{}, err
	}
	defer disk.Unmount()
	res := DiskFullResult{Medium: disk.Medium, Codes: map[string]int{}}
	store := filepath.Join(dir, "store")
	acked, refused, err := fill(store, seed, &res, func() error { return disk.Grow(64 << 20) })
	if err != nil {
		return res, err
	}
	res.Lost, res.Appeared, err = check(store, acked, refused)
	for _, f := range doctor.Check(store).Findings {
		if f.Severity == doctor.Fail {
			res.Doctor = append(res.Doctor, f.Check+": "+f.Detail)
		}
	}
	return res, err
}

// fill commits units of 1–4 notes until maxRefused were refused, then
// calls grow and checks the same store commits again. It returns the ids
// of the acknowledged and of the refused units.
func fill(store string, seed uint64, res *DiskFullResult, grow func() error) (acked, refused []string, err error) {
	s, err := hikoutei.Open(store, hikoutei.Options{HeartbeatInterval: -1, SnapshotEvery: 500}, NoteDef)
	if err != nil {
		return nil, nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	for i := 0; res.Refused < maxRefused; i++ {
		if i == maxAttempts {
			return acked, refused, errors.Join(fmt.Errorf("%d commits, %d refused: the disk never filled", i, res.Refused), s.Close())
		}
		ids := unitIDs(fmt.Sprintf("n%06d", i), 1+rng.IntN(4))
		if err := commitNotes(s, ids, rng); res.note(s, err) {
			acked = append(acked, ids...)
		} else {
			refused = append(refused, ids...)
		}
	}
	if err := grow(); err != nil {
		return acked, refused, errors.Join(err, s.Close())
	}
	if err := commitNotes(s, []string{"after-grow"}, rng); err != nil {
		return acked, refused, errors.Join(fmt.Errorf("commit after space was freed: %w", err), s.Close())
	}
	return append(acked, "after-grow"), refused, s.Close()
}

func unitIDs(prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return ids
}

// commitNotes commits one unit persisting a note of 200–1,000 random
// letters per id.
func commitNotes(s *hikoutei.Store, ids []string, rng *rand.Rand) error {
	u := s.Begin()
	for _, id := range ids {
		text := make([]byte, 200+rng.IntN(800))
		for i := range text {
			text[i] = byte('a' + rng.IntN(26))
		}
		if err := u.Persist(&Note{ID: id, Text: string(text)}); err != nil {
			return err
		}
	}
	_, err := u.Commit(context.Background())
	return err
}

// note records a commit's outcome and reports whether it was acknowledged.
func (r *DiskFullResult) note(s *hikoutei.Store, err error) bool {
	if err == nil || errors.Is(err, hikoutei.ErrReadModelBehind) {
		r.Acked++
		return true
	}
	r.Refused++
	r.Codes[codeOf(err)]++
	if s.Health().Local == nil {
		r.Unreported++
	}
	return false
}

// codeOf is the stable code of a refused commit's error.
func codeOf(err error) string {
	for _, code := range []error{hikoutei.ErrLogWrite, hikoutei.ErrReadModelUnavailable, hikoutei.ErrLogCommitUncertain, hikoutei.ErrStaleWriterFence} {
		if errors.Is(err, code) {
			return code.Error()
		}
	}
	return "other"
}

// check reopens store and returns the acked ids it cannot read and the
// refused ids it can.
func check(store string, acked, refused []string) (lost, appeared []string, err error) {
	s, err := hikoutei.Open(store, hikoutei.Options{HeartbeatInterval: -1}, NoteDef)
	if err != nil {
		return nil, nil, fmt.Errorf("reopen after recovery: %w", err)
	}
	defer s.Close()
	ctx := context.Background()
	for _, id := range acked {
		if _, err := hikoutei.Get[Note](ctx, s, id); err != nil {
			lost = append(lost, id)
		}
	}
	for _, id := range refused {
		if _, err := hikoutei.Get[Note](ctx, s, id); err == nil {
			appeared = append(appeared, id)
		}
	}
	return lost, appeared, nil
}
