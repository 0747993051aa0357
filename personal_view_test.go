package hikoutei

import (
	"testing"

	"github.com/hikoutei/hikoutei-go/internal/keyring"
)

// View.RecordSealed leaves a personal value sealed (what the log holds),
// where Record opens it; a field that is not personal reads the same.
func TestViewRecordSealedLeavesPersonalValuesSealed(t *testing.T) {
	s := openPeople(t, t.TempDir())
	defer s.Close()
	res := commit(t, s, &Person{ID: "p-alice", Name: aliceName, City: "Lyon"})
	v, err := s.AsOf(ctx, AtSeq(res.LastSeq))
	mustT(t, err)
	defer v.Close()
	opened, err := v.Record(ctx, "Person", "p-alice")
	mustT(t, err)
	sealed, err := v.RecordSealed(ctx, "Person", "p-alice")
	mustT(t, err)
	name, _ := sealed["name"].(string)
	if opened["name"] != aliceName || !keyring.IsSealed(name) || sealed["city"] != "Lyon" || sealed["id"] != "p-alice" {
		t.Fatalf("Record %v, RecordSealed %v", opened, sealed)
	}
}
