package cell

// tokKind is the kind of one cell token of a values row.
type tokKind uint8

const (
	tokBad tokKind = iota // not a scalar (an array, an object) or malformed
	tokEnd                // the row's closing bracket
	tokString
	tokNumber
	tokTrue
	tokFalse
	tokNull
)

// rowScanner walks the cells of one values row: a JSON array of scalars,
// already validated as JSON by the decoder that cut it from the response.
type rowScanner struct {
	b []byte
	i int
}

func (s *rowScanner) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// open consumes the opening bracket.
func (s *rowScanner) open() bool {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '[' {
		return false
	}
	s.i++
	return true
}

// done reports whether only white space follows.
func (s *rowScanner) done() bool {
	s.ws()
	return s.i == len(s.b)
}

// next returns the next cell token and whether another cell follows it.
func (s *rowScanner) next() (tok []byte, kind tokKind, more bool) {
	s.ws()
	if s.i >= len(s.b) {
		return nil, tokBad, false
	}
	start := s.i
	switch c := s.b[s.i]; {
	case c == ']':
		s.i++
		return nil, tokEnd, false
	case c == '"':
		kind = s.str()
	case c == '-' || (c >= '0' && c <= '9'):
		kind = s.number()
	default:
		kind = s.literal()
	}
	if kind == tokBad {
		return nil, tokBad, false
	}
	tok = s.b[start:s.i]
	s.ws()
	if s.i >= len(s.b) {
		return nil, tokBad, false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		return tok, kind, true
	case ']':
		s.i++
		return tok, kind, false
	}
	return nil, tokBad, false
}

func (s *rowScanner) str() tokKind {
	for s.i++; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '\\':
			s.i++
		case '"':
			s.i++
			return tokString
		}
	}
	return tokBad
}

func (s *rowScanner) number() tokKind {
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			s.i++
		default:
			return tokNumber
		}
	}
	return tokNumber
}

func (s *rowScanner) literal() tokKind {
	for _, l := range [...]struct {
		text string
		kind tokKind
	}{{"true", tokTrue}, {"false", tokFalse}, {"null", tokNull}} {
		if len(s.b)-s.i >= len(l.text) && string(s.b[s.i:s.i+len(l.text)]) == l.text {
			s.i += len(l.text)
			return l.kind
		}
	}
	return tokBad
}
