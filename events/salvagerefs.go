package events

// salvageRefs tracks, while a salvage copies records, the entity.persisted
// records it recovered and the effect.queued records whose values refer to
// one of their own commit (values_of): a reference whose target was lost
// cannot be read, so that effect.queued is dropped and counted lost too.
type salvageRefs struct {
	persisted map[refKey]string // recovered entity.persisted → its commit
	queued    []salvageRef
}

// salvageRef is one recovered effect.queued that refers to its commit's
// entity.persisted at target.
type salvageRef struct {
	seq    uint64
	self   refKey
	target refKey
	commit string
}

// note records what a recovered record means for references.
func (r *salvageRefs) note(seq uint64, rec []byte, h header) {
	switch h.typ {
	case TypeEntityPersisted:
		if r.persisted == nil {
			r.persisted = map[refKey]string{}
		}
		r.persisted[refKey{h.Stream, h.Version}] = h.Commit
	case TypeEffectQueued:
		ev, err := DecodeRecord(seq, rec)
		p, ok := ev.Payload.(EffectQueued)
		if err != nil || !ok || p.ValuesOf == 0 || p.Values != nil {
			return
		}
		r.queued = append(r.queued, salvageRef{seq: seq, self: refKey{h.Stream, h.Version},
			target: refKey{EntityStream(p.Entity, p.ID), p.ValuesOf}, commit: h.Commit})
	}
}

// orphans are the recovered effect.queued records whose target was not
// recovered in their commit.
func (r *salvageRefs) orphans() []salvageRef {
	var out []salvageRef
	for _, q := range r.queued {
		if c, ok := r.persisted[q.target]; !ok || c != q.commit {
			out = append(out, q)
		}
	}
	return out
}

// put copies one recovered record and notes its references.
func (s *salvage) put(seq uint64, rec []byte, h header) error {
	if err := s.out.put(seq, rec, h); err != nil {
		return err
	}
	s.refs.note(seq, rec, h)
	return nil
}

// dropOrphans removes the effect.queued records whose values refer to a
// lost entity.persisted: they are lost with it (counted in Lost).
func (s *salvage) dropOrphans() error {
	for _, o := range s.refs.orphans() {
		if err := s.out.remove(o.seq, o.self); err != nil {
			return err
		}
		var one SeqRanges
		one.Add(o.seq)
		s.have = s.have.Minus(one)
		s.rep.FromScan = s.rep.FromScan.Minus(one)
	}
	return nil
}
