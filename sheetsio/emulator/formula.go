package emulator

import (
	"math"
	"strconv"
	"strings"

	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
)

// effective is a computed cell value: what the cell displays.
type effective struct {
	Kind    string // kindEmpty, kindNumber, kindString, kindBool, or "e" (error)
	Num     float64
	Str     string
	Bool    bool
	ErrType string // errorValue.type, e.g. DIVIDE_BY_ZERO
	ErrMsg  string
	Fmt     string
	FmtPat  string
	List    []effective // cells of a range argument (Kind kindRange)
}

const (
	kindError = "e"
	kindRange = "r"
)

// errorDisplay maps errorValue types to what a cell shows.
var errorDisplay = map[string]string{
	"DIVIDE_BY_ZERO": "#DIV/0!", "VALUE": "#VALUE!", "REF": "#REF!", "NAME": "#NAME?",
	"NUM": "#NUM!", "N_A": "#N/A", "ERROR": "#ERROR!", "NULL_VALUE": "#NULL!",
}

const maxFormulaDepth = 64

// maxFormulaNesting bounds parentheses and function-call nesting inside one
// formula, so a hostile 50,000-character formula cannot make a read
// recurse tens of thousands of levels under the state lock.
const maxFormulaNesting = 256

// evaluator computes formula cells: arithmetic (+ - * / ^ %, unary minus,
// parentheses), string literals, &, comparisons, TRUE/FALSE, cell and range
// references (optionally on another tab) and the functions in formulaFuncs;
// any other function yields errorValue type ERROR.
//
// Each formula cell is evaluated at most once per evaluator (memo), and a
// reference back to a cell still being evaluated is a circular dependency
// (REF), so fan-out references (A2 = A1+A1, A3 = A2+A2, …, or a cell adding
// itself twice) cost linear, not exponential, time under the state lock.
type evaluator struct {
	b      *book
	depth  int
	memo   map[cellKey]effective
	active map[cellKey]bool
}

// cellKey names one cell of the book.
type cellKey struct {
	sheet int64
	r, c  int
}

func (b *book) effectiveOf(s *sheet, r, c int) effective {
	ev := &evaluator{b: b}
	return ev.cell(s, r, c)
}

func (ev *evaluator) cell(s *sheet, r, c int) effective {
	cd := s.cell(r, c)
	switch cd.Kind {
	case kindNumber:
		return effective{Kind: kindNumber, Num: cd.Num, Fmt: cd.Fmt, FmtPat: cd.FmtPat}
	case kindString:
		return effective{Kind: kindString, Str: cd.Str}
	case kindBool:
		return effective{Kind: kindBool, Bool: cd.Bool}
	case kindFormula:
		key := cellKey{s.ID, r, c}
		if v, ok := ev.memo[key]; ok {
			return v
		}
		if ev.active[key] || ev.depth >= maxFormulaDepth {
			return errEff("REF", "Circular dependency detected.")
		}
		if ev.memo == nil {
			ev.memo, ev.active = map[cellKey]effective{}, map[cellKey]bool{}
		}
		ev.depth++
		ev.active[key] = true
		v := ev.formula(s, cd)
		ev.depth--
		delete(ev.active, key)
		ev.memo[key] = v
		return v
	}
	return effective{}
}

// formula evaluates a formula cell's text.
func (ev *evaluator) formula(s *sheet, cd cellData) effective {
	p := &formulaParser{src: cd.Str[1:], ev: ev, sheet: s}
	v := p.parse()
	if v.Kind == kindRange {
		v = errEff("VALUE", "A range cannot be the result of a single-cell formula in the emulator.")
	}
	if v.Kind == kindEmpty {
		v = effective{Kind: kindNumber}
	}
	if v.Kind == kindNumber && (math.IsInf(v.Num, 0) || math.IsNaN(v.Num)) {
		// Google shows #NUM! for an overflowing result; a non-finite number
		// would also make the JSON response unencodable.
		v = errEff("NUM", "The result is too large or not a number.")
	}
	if v.Kind == kindNumber && cd.Fmt != "" {
		v.Fmt, v.FmtPat = cd.Fmt, cd.FmtPat
	}
	return v
}

func errEff(t, msg string) effective {
	return effective{Kind: kindError, ErrType: t, ErrMsg: msg}
}

// formulaParser is a recursive-descent parser that evaluates as it parses.
type formulaParser struct {
	nest  int // expression nesting (parentheses, function arguments)
	src   string
	pos   int
	ev    *evaluator
	sheet *sheet
	fail  *effective
}

func (p *formulaParser) parse() effective {
	v := p.compare()
	p.skipSpace()
	if p.fail != nil {
		return *p.fail
	}
	if p.pos != len(p.src) {
		return errEff("ERROR", "Unsupported formula: the emulator evaluates arithmetic and cell references only.")
	}
	return v
}

func (p *formulaParser) failWith(e effective) effective {
	if p.fail == nil {
		p.fail = &e
	}
	return e
}

func (p *formulaParser) skipSpace() {
	for p.pos < len(p.src) && p.src[p.pos] == ' ' {
		p.pos++
	}
}

func (p *formulaParser) peekOp(ops ...string) string {
	p.skipSpace()
	for _, op := range ops {
		if strings.HasPrefix(p.src[p.pos:], op) {
			p.pos += len(op)
			return op
		}
	}
	return ""
}

func (p *formulaParser) compare() effective {
	if p.nest++; p.nest > maxFormulaNesting {
		return p.failWith(errEff("ERROR", "Formula parse error: nesting is too deep."))
	}
	defer func() { p.nest-- }()
	left := p.concat()
	op := p.peekOp("<>", "<=", ">=", "=", "<", ">")
	if op == "" {
		return left
	}
	right := p.concat()
	if e, bad := firstError(left, right); bad {
		return e
	}
	return effective{Kind: kindBool, Bool: compareEff(left, right, op)}
}

func compareEff(l, r effective, op string) bool {
	var c int
	if l.Kind == kindString || r.Kind == kindString {
		c = strings.Compare(strings.ToLower(toText(l)), strings.ToLower(toText(r)))
	} else {
		a, _ := toNumber(l)
		b, _ := toNumber(r)
		c = cmpFloat(a, b)
	}
	switch op {
	case "=":
		return c == 0
	case "<>":
		return c != 0
	case "<":
		return c < 0
	case ">":
		return c > 0
	case "<=":
		return c <= 0
	}
	return c >= 0
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (p *formulaParser) concat() effective {
	v := p.additive()
	for p.peekOp("&") != "" {
		r := p.additive()
		if e, bad := firstError(v, r); bad {
			return e
		}
		v = effective{Kind: kindString, Str: toText(v) + toText(r)}
	}
	return v
}

func (p *formulaParser) additive() effective {
	v := p.term()
	for {
		op := p.peekOp("+", "-")
		if op == "" {
			return v
		}
		v = p.arith(v, p.term(), op)
	}
}

func (p *formulaParser) term() effective {
	v := p.power()
	for {
		op := p.peekOp("*", "/")
		if op == "" {
			return v
		}
		v = p.arith(v, p.power(), op)
	}
}

func (p *formulaParser) power() effective {
	v := p.unary()
	if p.peekOp("^") != "" {
		return p.arith(v, p.power(), "^")
	}
	return v
}

func (p *formulaParser) unary() effective {
	signs := 0
	for {
		switch p.peekOp("-", "+") {
		case "-":
			signs++
			continue
		case "+":
			continue
		}
		break
	}
	if signs > 0 {
		// Signs are counted iteratively, so 50,000 of them cannot recurse
		// that deep; negating twice keeps "--x" coercing x to a number.
		zero := effective{Kind: kindNumber}
		v := p.arith(zero, p.unary(), "-")
		if signs%2 == 0 {
			v = p.arith(zero, v, "-")
		}
		return v
	}
	v := p.primary()
	if p.peekOp("%") != "" {
		return p.arith(v, effective{Kind: kindNumber, Num: 100}, "/")
	}
	return v
}

func (p *formulaParser) arith(l, r effective, op string) effective {
	if e, bad := firstError(l, r); bad {
		return e
	}
	a, okA := toNumber(l)
	b, okB := toNumber(r)
	if !okA || !okB {
		return errEff("VALUE", "Operator "+op+" expects number values.")
	}
	var x float64
	switch op {
	case "+":
		x = a + b
	case "-":
		x = a - b
	case "*":
		x = a * b
	case "/":
		if b == 0 {
			return errEff("DIVIDE_BY_ZERO", "Function DIVIDE parameter 2 cannot be zero.")
		}
		x = a / b
	case "^":
		x = math.Pow(a, b)
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return errEff("NUM", "Result is not a finite number.")
	}
	return effective{Kind: kindNumber, Num: x}
}

func firstError(vs ...effective) (effective, bool) {
	for _, v := range vs {
		if v.Kind == kindError {
			return v, true
		}
	}
	return effective{}, false
}

func toNumber(v effective) (float64, bool) {
	switch v.Kind {
	case kindEmpty:
		return 0, true
	case kindNumber:
		return v.Num, true
	case kindBool:
		if v.Bool {
			return 1, true
		}
		return 0, true
	case kindString:
		c, ok := parseTypedNumber(strings.TrimSpace(v.Str))
		return c.Num, ok
	}
	return 0, false
}

func toText(v effective) string {
	switch v.Kind {
	case kindNumber:
		return formatGeneral(v.Num)
	case kindBool:
		return strings.ToUpper(strconv.FormatBool(v.Bool))
	}
	return v.Str
}

func (p *formulaParser) primary() effective {
	p.skipSpace()
	if p.pos >= len(p.src) {
		return p.failWith(errEff("ERROR", "Formula parse error."))
	}
	ch := p.src[p.pos]
	switch {
	case ch == '(':
		p.pos++
		v := p.compare()
		if p.peekOp(")") == "" {
			return p.failWith(errEff("ERROR", "Formula parse error."))
		}
		return v
	case ch == '"':
		return p.stringLit()
	case ch >= '0' && ch <= '9' || ch == '.':
		return p.numberLit()
	}
	return p.reference()
}

func (p *formulaParser) stringLit() effective {
	var b strings.Builder
	p.pos++
	for p.pos < len(p.src) {
		if p.src[p.pos] == '"' {
			if p.pos+1 < len(p.src) && p.src[p.pos+1] == '"' {
				b.WriteByte('"')
				p.pos += 2
				continue
			}
			p.pos++
			return effective{Kind: kindString, Str: b.String()}
		}
		b.WriteByte(p.src[p.pos])
		p.pos++
	}
	return p.failWith(errEff("ERROR", "Formula parse error."))
}

func (p *formulaParser) numberLit() effective {
	start := p.pos
	for p.pos < len(p.src) && strings.IndexByte("0123456789.eE", p.src[p.pos]) >= 0 {
		if (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') && p.pos+1 < len(p.src) && strings.IndexByte("+-", p.src[p.pos+1]) >= 0 {
			p.pos++
		}
		p.pos++
	}
	x, err := strconv.ParseFloat(p.src[start:p.pos], 64)
	if err != nil {
		return p.failWith(errEff("ERROR", "Formula parse error."))
	}
	return effective{Kind: kindNumber, Num: x}
}

// reference parses TRUE, FALSE, A1, Tab!A1 or 'Tab'!A1.
func (p *formulaParser) reference() effective {
	start := p.pos
	if p.src[p.pos] == '\'' {
		p.pos++
		for p.pos < len(p.src) && !(p.src[p.pos] == '\'' && (p.pos+1 >= len(p.src) || p.src[p.pos+1] != '\'')) {
			if p.src[p.pos] == '\'' {
				p.pos++
			}
			p.pos++
		}
		p.pos++
	}
	for p.pos < len(p.src) && isRefChar(p.src[p.pos]) {
		p.pos++
	}
	text := p.src[start:min(p.pos, len(p.src))]
	if p.pos < len(p.src) && p.src[p.pos] == '(' {
		return p.call(text)
	}
	switch strings.ToUpper(text) {
	case "TRUE", "FALSE":
		return effective{Kind: kindBool, Bool: strings.EqualFold(text, "TRUE")}
	}
	if p.pos < len(p.src) && p.src[p.pos] == ':' {
		p.pos++
		end := p.pos
		for end < len(p.src) && isRefChar(p.src[end]) {
			end++
		}
		text, p.pos = text+":"+p.src[p.pos:end], end
		return p.lookupRange(text)
	}
	return p.lookup(text)
}

// call parses the arguments of name( … ) and evaluates the function.
func (p *formulaParser) call(name string) effective {
	p.pos++
	var args []effective
	if p.peekOp(")") == "" {
		for {
			args = append(args, p.compare())
			if p.peekOp(",") != "" {
				continue
			}
			if p.peekOp(")") == "" {
				return p.failWith(errEff("ERROR", "Formula parse error."))
			}
			break
		}
	}
	fn, ok := formulaFuncs[strings.ToUpper(name)]
	if !ok {
		return p.failWith(errEff("ERROR", "Unsupported function in the emulator: "+strings.ToUpper(name)))
	}
	return fn(args)
}

// lookupRange evaluates every cell of a range reference (open ends bounded
// to the tab's grid).
func (p *formulaParser) lookupRange(text string) effective {
	r, err := a1.Parse(strings.ReplaceAll(text, "$", ""))
	if err != nil || r.WholeSheet {
		return p.failWith(errEff("ERROR", "Formula parse error."))
	}
	target := p.sheet
	if r.HasSheet {
		if target = p.ev.b.sheetByTitle(r.Sheet); target == nil {
			return errEff("REF", "Unresolved sheet name '"+r.Sheet+"'.")
		}
	}
	b, err := r.Bound(target.RowCount, target.ColCount)
	if err != nil {
		return errEff("REF", "Range is outside the grid.")
	}
	out := effective{Kind: kindRange}
	for row := b.StartRow; row < min(b.EndRow, len(target.Rows)); row++ {
		for col := b.StartCol; col < min(b.EndCol, len(target.Rows[row])); col++ {
			out.List = append(out.List, p.ev.cell(target, row, col))
		}
	}
	return out
}

func isRefChar(c byte) bool {
	return c == '!' || c == '$' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
}

func (p *formulaParser) lookup(text string) effective {
	r, err := a1.Parse(strings.ReplaceAll(text, "$", ""))
	if err != nil || r.WholeSheet || r.Rows() != 1 || r.Cols() != 1 {
		return p.failWith(errEff("ERROR", "Unsupported formula: the emulator evaluates single-cell references only."))
	}
	target := p.sheet
	if r.HasSheet {
		target = p.ev.b.sheetByTitle(r.Sheet)
		if target == nil {
			return errEff("REF", "Unresolved sheet name '"+r.Sheet+"'.")
		}
	}
	if r.StartRow >= target.RowCount || r.StartCol >= target.ColCount {
		return errEff("REF", "Reference is outside the grid.")
	}
	return p.ev.cell(target, r.StartRow, r.StartCol)
}
