package projector

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/events"
)

// Every entity table has a last column, hk_digest: the xxh64 of the row's
// values (the key and each field in declaration order, each converted to
// its field's kind) seeded with the table name. The projector computes it
// inside the row's upsert, through the SQL function hk_row_digest, from the
// values the row holds after the upsert; every read of a row (Select,
// EntityValues, VerifyRows) recomputes it from the values read and fails
// with ErrReadModelCorrupt when they differ, before any value is returned.
// It catches bytes changed inside a row and a row changed with an SQL
// UPDATE that did not recompute it; a deleted row, or one whose digest was
// recomputed, is found by comparing with a rebuild from the log (doctor).

// digestColumn is the name of the row digest column of entity tables.
const digestColumn = "hk_digest"

// digestFunc is the SQL function the upserts call (writing connection only).
const digestFunc = "hk_row_digest"

// maxFields bounds the fields of an entity: the key, the fields and the
// digest's tag must fit SQLite's 1,000 function arguments.
const maxFields = 998

// Kind codes of the digest's tag.
const (
	codeText  = 's'
	codeInt   = 'i'
	codeFloat = 'f'
	codeBool  = 'b'
	codeTime  = 't'
)

// Value tags inside the digest: a NULL differs from every value.
const (
	tagNull byte = iota
	tagInt
	tagFloat
	tagText
)

// digestTag is the first argument of hk_row_digest for table t: the table
// name, a colon and one kind code for the key and each field.
func digestTag(t events.EntityShape) string {
	var b strings.Builder
	b.WriteString(t.Name)
	b.WriteByte(':')
	b.WriteByte(codeText)
	for _, f := range t.Fields {
		b.WriteByte(kindCode(f.Kind))
	}
	return b.String()
}

func kindCode(k events.Kind) byte {
	switch k {
	case events.KindInt:
		return codeInt
	case events.KindFloat:
		return codeFloat
	case events.KindBool:
		return codeBool
	case events.KindTime:
		return codeTime
	}
	return codeText
}

// rowHasher hashes one row's values; the zero value is ready after start.
type rowHasher struct {
	h   xxhash.Digest
	buf [9]byte
}

func (r *rowHasher) start(tag string) {
	r.h.Reset()
	r.h.WriteString(tag)
	r.h.Write([]byte{0})
}

func (r *rowHasher) null() { r.h.Write([]byte{tagNull}) }

func (r *rowHasher) int(n int64) {
	r.buf[0] = tagInt
	binary.BigEndian.PutUint64(r.buf[1:], uint64(n))
	r.h.Write(r.buf[:])
}

// float hashes f; 0 and -0 hash alike (they are one value to SQLite, which
// may store an integral REAL as an integer).
func (r *rowHasher) float(f float64) {
	if f == 0 {
		f = 0
	}
	r.buf[0] = tagFloat
	binary.BigEndian.PutUint64(r.buf[1:], math.Float64bits(f))
	r.h.Write(r.buf[:])
}

func (r *rowHasher) text(s string) {
	r.buf[0] = tagText
	binary.BigEndian.PutUint64(r.buf[1:], uint64(len(s)))
	r.h.Write(r.buf[:])
	r.h.WriteString(s)
}

func (r *rowHasher) sum() int64 { return int64(r.h.Sum64()) }

// registerDigest adds hk_row_digest(tag, key, field…) to conn.
func registerDigest(conn *sqlite.Conn) error {
	return conn.CreateFunction(digestFunc, &sqlite.FunctionImpl{NArgs: -1, Deterministic: true, Scalar: digestSQL})
}

func digestSQL(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
	if len(args) == 0 {
		return sqlite.Value{}, errors.New(digestFunc + ": no tag")
	}
	tag := args[0].Text()
	i := strings.LastIndexByte(tag, ':')
	if i < 0 || len(tag)-i-1 != len(args)-1 {
		return sqlite.Value{}, fmt.Errorf("%s: tag %q does not fit %d values", digestFunc, tag, len(args)-1)
	}
	codes := tag[i+1:]
	var r rowHasher
	r.start(tag)
	for j, v := range args[1:] {
		if v.Type() == sqlite.TypeNull {
			r.null()
			continue
		}
		switch codes[j] {
		case codeInt, codeBool:
			r.int(v.Int64())
		case codeFloat:
			r.float(v.Float())
		default:
			r.text(v.Text())
		}
	}
	return sqlite.IntegerValue(r.sum()), nil
}

// rowReader reads the canonical values of entity rows selected as the key,
// the fields in declaration order, then hk_digest, and checks each row's
// digest before handing its values out.
type rowReader struct {
	table string
	tag   string
	kinds []events.Kind // the key's, then the fields'
	r     rowHasher
}

func newRowReader(t events.EntityShape) *rowReader {
	return &rowReader{table: t.Name, tag: digestTag(t), kinds: append([]events.Kind{events.KindString}, fieldKinds(t)...)}
}

// read returns the row's values (vals[0] the key). Errors:
// ErrReadModelCorrupt when the values do not match the row's digest.
func (rr *rowReader) read(st *sqlite.Stmt) ([]any, error) {
	rr.r.start(rr.tag)
	vals := make([]any, len(rr.kinds))
	for i, k := range rr.kinds {
		vals[i] = rr.column(st, i, k)
	}
	n := len(rr.kinds)
	if st.ColumnType(n) != sqlite.TypeInteger || st.ColumnInt64(n) != rr.r.sum() {
		return nil, rr.corrupt(st, "its values do not match its digest")
	}
	for i, k := range rr.kinds {
		if s, ok := vals[i].(string); ok && k == events.KindTime {
			t, err := time.Parse(TimeLayout, s)
			if err != nil {
				return nil, rr.corrupt(st, "a time column is malformed")
			}
			vals[i] = t
		}
	}
	return vals, nil
}

// column reads column i as a value of kind k, hashing what it read (a time
// stays text here; read parses it once the digest matched).
func (rr *rowReader) column(st *sqlite.Stmt, i int, k events.Kind) any {
	if st.ColumnType(i) == sqlite.TypeNull {
		rr.r.null()
		return nil
	}
	switch k {
	case events.KindInt:
		n := st.ColumnInt64(i)
		rr.r.int(n)
		return n
	case events.KindBool:
		n := st.ColumnInt64(i)
		rr.r.int(n)
		return n != 0
	case events.KindFloat:
		f := st.ColumnFloat(i)
		rr.r.float(f)
		return f
	}
	s := st.ColumnText(i)
	rr.r.text(s)
	return s
}

func (rr *rowReader) corrupt(st *sqlite.Stmt, why string) error {
	return &CorruptRowError{Table: rr.table, Key: st.ColumnText(0), Reason: why}
}

// corruption marks SQLite's own reports of a damaged file (SQLITE_CORRUPT,
// SQLITE_NOTADB) as ErrReadModelCorrupt; other errors pass unchanged.
func corruption(err error) error {
	switch sqlite.ErrCode(err).ToPrimary() {
	case sqlite.ResultCorrupt, sqlite.ResultNotADB:
		if !errors.Is(err, ErrReadModelCorrupt) {
			return fmt.Errorf("%w: %w", ErrReadModelCorrupt, err)
		}
	}
	return err
}

// CorruptRowError is a row of an entity table whose values do not match
// its digest: read.sqlite was damaged or edited outside the store. It is
// ErrReadModelCorrupt (errors.Is).
type CorruptRowError struct {
	Table  string // the entity
	Key    string // the primary key as stored (itself possibly damaged)
	Reason string
}

func (e *CorruptRowError) Error() string {
	return fmt.Sprintf("%s: %s row %q: %s", ErrReadModelCorrupt, e.Table, e.Key, e.Reason)
}

// Unwrap makes the error ErrReadModelCorrupt.
func (e *CorruptRowError) Unwrap() error { return ErrReadModelCorrupt }

// VerifyRows checks the digest of every row of the entity tables of the
// read model at path (its own read-only connection). It returns how many
// rows it read and the first maxBad rows that do not match; an unreadable
// file or table is an error.
func VerifyRows(path string, shapes []events.EntityShape, maxBad int) (int, []*CorruptRowError, error) {
	conn, err := openConn(path, sqlite.OpenReadOnly)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %w", ErrReadModelInvalid, err)
	}
	defer conn.Close()
	return VerifyRowsOn(conn, shapes, maxBad)
}

// VerifyRowsOn is VerifyRows on a connection the caller opened (and
// closes): one that leaves nothing in the store directory.
func VerifyRowsOn(conn *sqlite.Conn, shapes []events.EntityShape, maxBad int) (int, []*CorruptRowError, error) {
	var bad []*CorruptRowError
	n := 0
	for _, t := range shapes {
		rows, err := verifyTable(conn, t, func(e *CorruptRowError) {
			if len(bad) < maxBad {
				bad = append(bad, e)
			}
		})
		n += rows
		if err != nil {
			return n, bad, fmt.Errorf("%s: %w", t.Name, corruption(err))
		}
	}
	return n, bad, nil
}

// verifyTable reads every row of t, calling corrupt for each that does not
// match its digest, and returns how many rows it read.
func verifyTable(conn *sqlite.Conn, t events.EntityShape, corrupt func(*CorruptRowError)) (int, error) {
	sqlText, _, err := selectSQL(t, Query{})
	if err != nil {
		return 0, err
	}
	stmt, _, err := conn.PrepareTransient(sqlText)
	if err != nil {
		return 0, err
	}
	defer stmt.Finalize()
	rr := newRowReader(t)
	for n := 0; ; n++ {
		ok, err := stmt.Step()
		if err != nil || !ok {
			return n, err
		}
		var cre *CorruptRowError
		if _, err := rr.read(stmt); errors.As(err, &cre) {
			corrupt(cre)
		}
	}
}
