package events

import (
	"encoding/json"
	"errors"
	"path/filepath"

	"github.com/hikoutei/hikoutei-go/segstore"
)

// readSegments keeps the sealed segments of the source's manifest that
// verify against it (digest, records, their checksums and sequences),
// before any record is copied: each is copied into the segments folder
// beside the new log, and its records count as recovered (a copy of one
// found on a free page is not copied again). The others are reported
// (SegmentsLost) and dropped from the manifest, so their records count as
// lost. An unreadable manifest is a problem and keeps nothing.
func (s *salvage) readSegments() error {
	raw := s.meta[string(metaSegments)]
	entries := s.w.keyValues(s.w.rootBuckets()[string(bucketManifest)])
	if raw == nil && len(entries) == 0 {
		return nil
	}
	segs, err := manifestOf(raw, entries)
	if err != nil {
		s.problem(err)
		return nil
	}
	storeID := string(s.meta[string(metaStoreID)])
	var dropped []SegmentSealed
	for _, seg := range segs {
		recs, err := loadSegment(s.srcSegments(), storeID, seg)
		var se *SegmentError
		if errors.As(err, &se) {
			s.rep.SegmentsLost = append(s.rep.SegmentsLost, se)
			dropped = append(dropped, seg)
			continue
		}
		if err == nil {
			err = s.keepSegment(seg, recs)
		}
		if err != nil {
			return err
		}
	}
	s.shadow(dropped)
	return nil
}

// shadow marks the ranges of the dropped segments that a kept segment
// follows (salvage.shadowed): copies of their records found in log.db or
// on free pages would sit between two segments, where no reader looks.
func (s *salvage) shadow(dropped []SegmentSealed) {
	if len(s.kept) == 0 {
		return
	}
	last := s.kept[len(s.kept)-1].Last
	for _, seg := range dropped {
		if seg.Last < last {
			s.shadowed.AddRange(seg.First, seg.Last)
		}
	}
}

// keepSegment copies seg beside the new log and counts its records.
func (s *salvage) keepSegment(seg SegmentSealed, recs segRecords) error {
	to := segstore.NewDir(filepath.Join(filepath.Dir(s.dst), SegmentsDir))
	if _, err := copySegment(s.srcSegments(), to, seg); err != nil {
		return err
	}
	for _, r := range recs {
		rec, err := parseRaw(r.seq, r.raw)
		if err != nil {
			return err
		}
		s.have.Add(r.seq)
		s.sealed.Add(r.seq)
		s.refs.note(r.seq, r.raw, rec.h)
	}
	s.kept = append(s.kept, seg)
	s.rep.Segments = append(s.rep.Segments, seg.Name)
	return nil
}

// srcSegments is where the source's segments live: SalvageOptions.Segments,
// or the folder beside the source.
func (s *salvage) srcSegments() segstore.Store {
	if s.opts.Segments != nil {
		return s.opts.Segments
	}
	return segstore.NewDir(filepath.Join(filepath.Dir(s.src), SegmentsDir))
}

// segmentsMeta sets the new log's manifest of segments to the kept ones
// (as a meta array, which every build since sealing reads).
func (s *salvage) segmentsMeta(meta map[string][]byte) error {
	delete(meta, string(metaSegments))
	if len(s.kept) == 0 {
		return nil
	}
	b, err := json.Marshal(s.kept)
	meta[string(metaSegments)] = b
	return err
}
