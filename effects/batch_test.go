package effects

import "testing"

func TestAdaptiveBatchHalvesOnTroubleAndRecovers(t *testing.T) {
	d := &Dispatcher{cfg: Config{MaxBatch: 1000}}
	if d.batchSize() != 1000 {
		t.Fatalf("initial batch %d", d.batchSize())
	}
	for range 10 {
		d.adapt(true)
	}
	if d.batchSize() != minBatch {
		t.Fatalf("after repeated trouble %d, want floor %d", d.batchSize(), minBatch)
	}
	for range 10 {
		d.adapt(false)
	}
	if d.batchSize() != 1000 {
		t.Fatalf("after clean dispatches %d, want back to 1000", d.batchSize())
	}
	small := &Dispatcher{cfg: Config{MaxBatch: 8}}
	small.adapt(true)
	if small.batchSize() != 8 { // the floor never exceeds MaxBatch
		t.Fatalf("a MaxBatch below the floor: %d", small.batchSize())
	}
}
