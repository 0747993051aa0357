package events

import (
	"errors"
	"testing"
	"time"
)

func TestConvertValueIsLosslessOrRefused(t *testing.T) {
	f := func(k Kind, nullable bool) FieldShape { return FieldShape{Name: "x", Kind: k, Nullable: nullable} }
	at := time.Date(2026, 12, 1, 10, 0, 0, 5e6, time.UTC)
	cases := []struct {
		v        any
		from, to FieldShape
		want     any
		ok       bool
	}{
		{int64(5), f(KindInt, false), f(KindFloat, false), 5.0, true},
		{int64(1<<53 + 1), f(KindInt, false), f(KindFloat, false), nil, false},
		{2.0, f(KindFloat, false), f(KindInt, false), int64(2), true},
		{2.5, f(KindFloat, false), f(KindInt, false), nil, false},
		{"A", f(KindString, false), f(KindFloat, false), nil, false},
		{"3", f(KindString, false), f(KindFloat, false), 3.0, true},
		{"1.50", f(KindString, false), f(KindFloat, false), nil, false},
		{"00123", f(KindString, false), f(KindInt, false), nil, false},
		{"123", f(KindString, false), f(KindInt, false), int64(123), true},
		{"+5", f(KindString, false), f(KindInt, false), nil, false},
		{"true", f(KindString, false), f(KindBool, false), true, true},
		{"yes", f(KindString, false), f(KindBool, false), nil, false},
		{at, f(KindTime, false), f(KindString, false), "2026-12-01T10:00:00.005Z", true},
		{"2026-12-01T10:00:00.005Z", f(KindString, false), f(KindTime, false), at, true},
		{true, f(KindBool, false), f(KindInt, false), nil, false},
		{int64(7), f(KindInt, false), f(KindString, false), "7", true},
		{nil, f(KindInt, true), f(KindInt, false), nil, false},
		{nil, f(KindInt, true), f(KindFloat, true), nil, true},
		{int64(7), f(KindInt, false), f(KindInt, true), int64(7), true},
	}
	for _, c := range cases {
		got, err := ConvertValue(c.v, c.from, c.to)
		if c.ok != (err == nil) || (!c.ok && !errors.Is(err, ErrValueNotConvertible)) {
			t.Errorf("ConvertValue(%#v, %s → %s): err %v, want ok=%v", c.v, KindName(c.from), KindName(c.to), err, c.ok)
			continue
		}
		if c.ok && got != c.want {
			if gt, ok := got.(time.Time); !ok || !gt.Equal(c.want.(time.Time)) {
				t.Errorf("ConvertValue(%#v, %s → %s) = %#v, want %#v", c.v, KindName(c.from), KindName(c.to), got, c.want)
			}
		}
		if c.ok && c.v != nil {
			back, err := ConvertValue(got, c.to, c.from)
			if err != nil {
				t.Errorf("ConvertValue(%#v) does not convert back: %v", got, err)
			} else if bt, ok := back.(time.Time); !(back == c.v || ok && bt.Equal(c.v.(time.Time))) {
				t.Errorf("ConvertValue(%#v, %s → %s) round trip gave %#v", c.v, KindName(c.from), KindName(c.to), back)
			}
		}
	}
}

func TestShapeHistoryFollowsRenamesAndDrops(t *testing.T) {
	h := ShapeHistory{
		{Seq: 3},
		{Seq: 10, Changed: &SchemaChanged{Changes: []ShapeChange{
			{Entity: "Rec", Kind: ChangeFieldRenamed, Field: "title", From: "name", To: "title", Class: ClassCompatible},
			{Entity: "Rec", Kind: ChangeFieldDropped, Field: "notes", Class: ClassCompatible}}}},
		{Seq: 20, Changed: &SchemaChanged{Changes: []ShapeChange{
			{Entity: "Rec", Kind: ChangeFieldRenamed, Field: "heading", From: "title", To: "heading", Class: ClassCompatible}}}},
	}
	for _, c := range []struct {
		field string
		seq   uint64
		want  string
		ok    bool
	}{
		{"name", 5, "heading", true}, {"title", 12, "heading", true}, {"heading", 25, "heading", true},
		{"notes", 5, "", false}, {"notes", 11, "notes", true}, {"other", 1, "other", true},
	} {
		got, ok := h.FieldName("Rec", c.field, c.seq)
		if got != c.want || ok != c.ok {
			t.Errorf("FieldName(%q at %d) = %q, %v; want %q, %v", c.field, c.seq, got, ok, c.want, c.ok)
		}
	}
	if got, _ := h.FieldName("Other", "name", 1); got != "name" {
		t.Errorf("another entity's field was renamed: %q", got)
	}
}
