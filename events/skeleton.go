package events

// skeleton checks the internal pages of a tree: every branch page is read
// and checked strictly, and every page id a branch or the root refers to
// is in range, not free, and referred to once. That excludes cycles, which
// would make a bbolt cursor loop forever rather than panic, while reading
// no leaf page: a branch's children are all branches or all leaves (a
// B+tree), as its first child's header says.
type skeleton struct {
	f    *boltFile
	free bitset
	refs bitset
}

type bitset []uint64

func newBitset(n uint64) bitset    { return make(bitset, n/64+1) }
func (b bitset) has(i uint64) bool { return b[i/64]&(1<<(i%64)) != 0 }
func (b bitset) set(i uint64)      { b[i/64] |= 1 << (i % 64) }

// checkSkeleton checks the tree of every bucket of the root page's
// elements, given the freelist's ids.
func (f *boltFile) checkSkeleton(root []pageElem, free []uint64) error {
	s := &skeleton{f: f, free: newBitset(f.meta.hwm), refs: newBitset(f.meta.hwm)}
	for _, id := range free {
		s.free.set(id)
	}
	s.refs.set(f.meta.root)
	for _, e := range root {
		if e.flags&bucketLeafFlag == 0 {
			return corrupt(CheckBucket, f.meta.root, "root element %q is not a bucket", e.key)
		}
		if err := s.bucket(e); err != nil {
			return err
		}
	}
	return nil
}

func (s *skeleton) bucket(e pageElem) error {
	id, inline, err := bucketRef(e.value)
	switch {
	case err != nil:
		return corrupt(CheckBucket, s.f.meta.root, "bucket %q: %v", e.key, err)
	case inline != nil && inline.flags != flagLeaf:
		return corrupt(CheckBucket, s.f.meta.root, "bucket %q: inline page of type %s", e.key, inline.typ())
	case inline != nil:
		_, err = inline.elements()
		return err
	}
	if err := s.ref(id); err != nil {
		return err
	}
	return s.node(id, 0)
}

// ref records a reference to page id.
func (s *skeleton) ref(id uint64) error {
	m := s.f.meta
	switch {
	case id < 2 || id >= m.hwm || id == m.freelist:
		return corrupt(CheckPage, id, "a branch refers to page %d: outside [2, %d) or the freelist", id, m.hwm)
	case s.free.has(id):
		return corrupt(CheckPage, id, "a branch refers to page %d, which the freelist lists as free", id)
	case s.refs.has(id):
		return corrupt(CheckPage, id, "page %d is referred to twice", id)
	}
	s.refs.set(id)
	return nil
}

// node checks page id, a bucket root or a branch's child of branch type.
func (s *skeleton) node(id uint64, depth int) error {
	if depth > maxTreeDepth {
		return corrupt(CheckPage, id, "the tree is deeper than %d", maxTreeDepth)
	}
	p, err := s.f.page(id, s.f.meta.hwm)
	if err != nil {
		return err
	}
	elems, err := p.elements()
	if err != nil || p.flags == flagLeaf {
		return err
	}
	childBranch, err := s.childType(elems[0].child)
	if err != nil {
		return err
	}
	for _, e := range elems {
		if err := s.ref(e.child); err != nil {
			return err
		}
		if childBranch {
			if err := s.node(e.child, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// childType reads the header of a branch's first child: branch or leaf.
func (s *skeleton) childType(id uint64) (branch bool, err error) {
	if id < 2 || id >= s.f.meta.hwm {
		return false, corrupt(CheckPage, id, "a branch refers to page %d outside [2, %d)", id, s.f.meta.hwm)
	}
	hb, err := s.f.readAt(int64(id)*int64(s.f.ps), pageHeaderSize)
	if err != nil {
		return false, err
	}
	h := pageHeader(hb)
	switch {
	case h.id != id:
		return false, corrupt(CheckPage, id, "page names itself %d", h.id)
	case h.flags != flagBranch && h.flags != flagLeaf:
		return false, corrupt(CheckPage, id, "type %s where a branch or leaf page belongs", h.typ())
	}
	return h.flags == flagBranch, nil
}
