package hikoutei

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/keyring"
	"github.com/hikoutei/hikoutei-go/internal/replication"
)

// keyReplica carries a replicated store's key file through its key stream
// (docs/replication.md, "Personal data keys"). The primary grants every
// new key to the stream before the commit sealed with it is replicated,
// and deletes an erased subject's key there once its subject.erased event
// committed; a standby applies the stream's grants and the log's
// erasures to its own key file, so a standby that takes over opens the
// values of subjects its old primary created and none its erasures
// destroyed.
type keyReplica struct {
	log *slog.Logger
	mu  sync.Mutex // held while the key file follows the stream or the log
	s   *Store     // nil until the store started
	// tookOver: the engine took the store over before it started.
	tookOver bool
	// erasedV is the version of the log's erasures stream applied.
	erasedV uint64
	// unsent are keys given locally whose grant the stream has not
	// acknowledged yet (sent before the next commit sealed with any key).
	unsent map[keyring.Digest]bool
	stop   context.CancelFunc // the standby's follower of the key stream
	done   chan struct{}
}

// keyFollowRetry is the pause before a standby follows the key stream
// again after its reader stopped (wall time: a retry pause).
const keyFollowRetry = 200 * time.Millisecond

// keyFetchTimeout bounds a read's fetch of a missing key.
const keyFetchTimeout = 5 * time.Second

// newKeyReplica hooks a replicated store's key file into the engine's
// roles (nil when the store is not replicated).
func newKeyReplica(opts Options, cfg *engine.Config) *keyReplica {
	if opts.Replication == nil {
		return nil
	}
	kr := &keyReplica{log: cfg.Logger, unsent: map[keyring.Digest]bool{}}
	if kr.log == nil {
		kr.log = slog.Default()
	}
	cfg.Keys = &engine.KeyHooks{Followed: kr.followed, Takeover: kr.takeover}
	return kr
}

// startKeyReplica brings the key file up to the key stream: a primary
// also stores what the stream lacks; a standby then follows it.
func (s *Store) startKeyReplica(ctx context.Context) error {
	kr := s.krep
	if kr == nil {
		return nil
	}
	kr.mu.Lock()
	defer kr.mu.Unlock()
	kr.s = s
	s.keys.fetch = kr.fetch
	if s.e.Role() == engine.RoleStandby && !kr.tookOver {
		if err := kr.catchUp(ctx, false); err != nil {
			return err
		}
		kr.startFollowing()
		return nil
	}
	return kr.catchUp(ctx, true)
}

// catchUp applies the key stream and the log's erasures to the key file;
// primary: it then stores the keys the stream lacks and deletes from it
// the keys erasures destroyed (an erasure a crash cut short).
func (kr *keyReplica) catchUp(ctx context.Context, primary bool) error {
	ks, err := kr.s.e.KeyStream(ctx)
	if err != nil {
		return err
	}
	if err := kr.identity(ctx, ks, primary); err != nil {
		return err
	}
	ring := kr.s.keys.ring.Load()
	if ring == nil {
		return nil // no personal value anywhere
	}
	if err := kr.applyLogged(ring); err != nil {
		return err
	}
	inStream := map[keyring.Digest]uint32{}
	if err := ks.ReadAll(ctx, func(m replication.KeyMsg) error { return kr.apply(m, inStream) }); err != nil {
		return err
	}
	if !primary {
		return nil
	}
	return kr.publish(ctx, ks, ring, inStream)
}

// identity makes the key file's identity the stream's: a primary claims
// the stream for its own when the stream has none; a store without a key
// file gets one when the stream has an identity.
func (kr *keyReplica) identity(ctx context.Context, ks *replication.KeyStream, primary bool) error {
	got, ok, err := ks.File(ctx)
	ring := kr.s.keys.ring.Load()
	switch {
	case err != nil:
		return err
	case !ok && (ring == nil || !primary):
		return nil
	case !ok:
		if got, err = ks.ClaimFile(ctx, ring.FileGrant()); err != nil {
			return err
		}
	}
	return kr.adopt(got)
}

// adopt gives the key file (created when missing) the identity g.
func (kr *keyReplica) adopt(g []byte) error {
	if kr.s.keys.ring.Load() == nil {
		kr.s.keys.erase.Lock()
		err := kr.s.createKeys()
		kr.s.keys.erase.Unlock()
		if err != nil {
			return err
		}
	}
	return kr.s.keys.ring.Load().AdoptFile(g)
}

// apply applies one key stream message; seen (may be nil) records the
// generation of each key message.
func (kr *keyReplica) apply(m replication.KeyMsg, seen map[keyring.Digest]uint32) error {
	if m.Kind == replication.KeyKindFile {
		return kr.adopt(m.Body)
	}
	ring := kr.s.keys.ring.Load()
	if ring == nil || (m.Kind != replication.KeyKindKey && m.Kind != replication.KeyKindErased) {
		return nil // a kind of a later build: not ours to apply
	}
	d, err := keyring.ParseDigest(m.Digest)
	if err != nil {
		return err
	}
	if m.Kind == replication.KeyKindErased {
		gen, err := keyring.ParseErasureGrant(m.Body)
		if err != nil {
			return err
		}
		return ring.ApplyErasure(d, gen)
	}
	if gen, ok := keyring.GrantGeneration(m.Body); ok && seen != nil {
		seen[d] = gen
	}
	_, err = ring.ApplyGrant(d, m.Body)
	return err
}

// applyLogged applies the log's subject.erased events not applied yet.
func (kr *keyReplica) applyLogged(ring *keyring.Ring) error {
	return kr.s.e.Log().ReadStream(events.ErasureStream, kr.erasedV+1, func(e events.Event) error {
		if x, ok := e.Payload.(events.SubjectErased); ok {
			d, err := keyring.ParseDigest(x.Subject)
			if err != nil {
				return err
			}
			if err := ring.ApplyErasure(d, uint32(x.Generation)); err != nil {
				return err
			}
		}
		kr.erasedV = e.Version
		return nil
	})
}

// publish stores in the stream every live key it lacks and deletes from it
// every key an erasure destroyed.
func (kr *keyReplica) publish(ctx context.Context, ks *replication.KeyStream, ring *keyring.Ring, inStream map[keyring.Digest]uint32) error {
	for d, gen := range ring.ErasedGenerations() {
		if g, ok := inStream[d]; ok && g <= gen {
			if err := ks.Erase(ctx, d.String(), keyring.ErasureGrant(gen)); err != nil {
				return err
			}
		}
	}
	for _, d := range ring.Live() {
		g, _ := ring.KeyGrant(d)
		if gen, _ := keyring.GrantGeneration(g); inStream[d] == gen {
			continue
		}
		if err := ks.Grant(ctx, d.String(), g, kr.s.e.Lease().Epoch); err != nil {
			return err
		}
	}
	clear(kr.unsent)
	return nil
}

// grant stores the keys of fresh (and of any earlier grant that failed)
// in the key stream, acknowledged, before the commit sealed with them is
// replicated: a standby that takes over holds every key a replicated
// commit needs. A failure fails the commit; the grant is retried by the
// next one.
func (kr *keyReplica) grant(ctx context.Context, ring *keyring.Ring, fresh []keyring.Digest) error {
	if kr == nil {
		return nil
	}
	kr.mu.Lock()
	defer kr.mu.Unlock()
	for _, d := range fresh {
		kr.unsent[d] = true
	}
	if len(kr.unsent) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, kr.s.e.AppendTimeout())
	defer cancel()
	ks, err := kr.s.e.KeyStream(ctx)
	if err != nil {
		return err
	}
	for d := range kr.unsent {
		if g, ok := ring.KeyGrant(d); ok {
			if err := ks.Grant(ctx, d.String(), g, kr.s.e.Lease().Epoch); err != nil {
				return fmt.Errorf("grant a subject's key to the standbys: %w", err)
			}
		}
		delete(kr.unsent, d)
	}
	return nil
}

// erased deletes the erased key of d from the key stream (the primary,
// once the key file destroyed it) and stores the erasure there.
func (kr *keyReplica) erased(ctx context.Context, d keyring.Digest, gen uint32) error {
	if kr == nil {
		return nil
	}
	kr.mu.Lock()
	defer kr.mu.Unlock()
	delete(kr.unsent, d)
	ctx, cancel := context.WithTimeout(ctx, kr.s.e.AppendTimeout())
	defer cancel()
	ks, err := kr.s.e.KeyStream(ctx)
	if err == nil {
		err = ks.Erase(ctx, d.String(), keyring.ErasureGrant(gen))
	}
	return err
}

// followed applies, on a standby, the erasures the commits just followed
// recorded.
func (kr *keyReplica) followed() {
	kr.mu.Lock()
	defer kr.mu.Unlock()
	if kr.s == nil || kr.s.keys.ring.Load() == nil {
		return
	}
	if err := kr.applyLogged(kr.s.keys.ring.Load()); err != nil {
		kr.s.keys.note(err)
		kr.log.Warn("personal data keys: applying an erasure failed; retried at the next commit", "err", err.Error())
	}
}

// takeover brings the key file up to the key stream and the log before
// the standby becomes the primary.
func (kr *keyReplica) takeover() error {
	kr.stopFollowing()
	kr.mu.Lock()
	defer kr.mu.Unlock()
	if kr.s == nil {
		kr.tookOver = true
		return nil
	}
	ctx, cancel := context.WithTimeout(kr.s.e.ReplicationContext(), kr.s.e.AppendTimeout())
	defer cancel()
	if err := kr.catchUp(ctx, true); err != nil {
		return err
	}
	kr.s.recordPersonalNow()
	kr.s.keys.forget() // a key the standby missed for a moment is here now
	kr.s.checkKeys(ctx)
	return nil
}

// fetch fetches d's key from the key stream into the key file: a standby
// may follow a commit before the key stream's reader brought the key its
// values were sealed with (the primary stored it in the key stream first).
func (kr *keyReplica) fetch(d keyring.Digest) bool {
	ring := kr.s.keys.ring.Load()
	ctx, cancel := context.WithTimeout(kr.s.e.ReplicationContext(), keyFetchTimeout)
	defer cancel()
	ks, err := kr.s.e.KeyStream(ctx)
	if err != nil || ring == nil {
		return false
	}
	g, ok, err := ks.Key(ctx, d.String())
	if err != nil || !ok {
		return false
	}
	applied, err := ring.ApplyGrant(d, g)
	return err == nil && applied
}

// startFollowing starts the standby's follower of the key stream.
func (kr *keyReplica) startFollowing() {
	ctx, cancel := context.WithCancel(kr.s.e.ReplicationContext())
	kr.stop, kr.done = cancel, make(chan struct{})
	go kr.follow(ctx, kr.done)
}

// stopFollowing stops the follower and waits for it (none: nothing).
func (kr *keyReplica) stopFollowing() {
	if kr == nil {
		return
	}
	kr.mu.Lock()
	stop, done := kr.stop, kr.done
	kr.stop, kr.done = nil, nil
	kr.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// follow applies the key stream's messages as they are stored, again
// after a failure, until ctx ends.
func (kr *keyReplica) follow(ctx context.Context, done chan struct{}) {
	defer close(done)
	for ctx.Err() == nil {
		ks, err := kr.s.e.KeyStream(ctx)
		if err == nil {
			err = ks.Follow(ctx, func(m replication.KeyMsg) error {
				kr.mu.Lock()
				defer kr.mu.Unlock()
				return kr.apply(m, nil)
			})
		}
		if ctx.Err() != nil {
			return
		}
		kr.s.keys.note(err)
		kr.log.Warn("personal data keys: following the key stream failed; retrying", "err", err.Error())
		select {
		case <-ctx.Done():
		case <-time.After(keyFollowRetry):
		}
	}
}
