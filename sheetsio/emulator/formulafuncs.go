package emulator

import (
	"math"
	"strings"
)

// formulaFuncs are the spreadsheet functions the emulator evaluates.
var formulaFuncs map[string]func([]effective) effective

func init() {
	formulaFuncs = map[string]func([]effective) effective{
		"SUM":         aggregate(func(xs []float64) float64 { return sum(xs) }),
		"AVERAGE":     averageFn,
		"MIN":         aggregate(func(xs []float64) float64 { return extreme(xs, math.Min) }),
		"MAX":         aggregate(func(xs []float64) float64 { return extreme(xs, math.Max) }),
		"COUNT":       countFn(func(v effective) bool { return v.Kind == kindNumber }),
		"COUNTA":      countFn(func(v effective) bool { return v.Kind != kindEmpty }),
		"ABS":         unaryNum(math.Abs),
		"INT":         unaryNum(math.Floor),
		"ROUND":       roundFn,
		"IF":          ifFn,
		"AND":         logicFn(true),
		"OR":          logicFn(false),
		"NOT":         notFn,
		"CONCATENATE": concatFn,
		"CONCAT":      concatFn,
		"LEN":         textFn(func(s string) effective { return effective{Kind: kindNumber, Num: float64(len([]rune(s)))} }),
		"UPPER":       textFn(func(s string) effective { return effective{Kind: kindString, Str: strings.ToUpper(s)} }),
		"LOWER":       textFn(func(s string) effective { return effective{Kind: kindString, Str: strings.ToLower(s)} }),
		"TRIM": textFn(func(s string) effective {
			return effective{Kind: kindString, Str: strings.Join(strings.Fields(s), " ")}
		}),
	}
}

// flatten expands range arguments; numbersOnly drops non-numeric range
// cells (as SUM does), direct arguments are coerced.
func flatten(args []effective) ([]float64, *effective) {
	var xs []float64
	for _, a := range args {
		items, direct := a.List, false
		if a.Kind != kindRange {
			items, direct = []effective{a}, true
		}
		for _, v := range items {
			if v.Kind == kindError {
				return nil, &v
			}
			if v.Kind == kindNumber {
				xs = append(xs, v.Num)
				continue
			}
			if direct {
				n, ok := toNumber(v)
				if !ok {
					e := errEff("VALUE", "Function expects number values.")
					return nil, &e
				}
				xs = append(xs, n)
			}
		}
	}
	return xs, nil
}

func aggregate(f func([]float64) float64) func([]effective) effective {
	return func(args []effective) effective {
		xs, bad := flatten(args)
		if bad != nil {
			return *bad
		}
		return effective{Kind: kindNumber, Num: f(xs)}
	}
}

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

func extreme(xs []float64, pick func(a, b float64) float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	m := xs[0]
	for _, x := range xs[1:] {
		m = pick(m, x)
	}
	return m
}

func averageFn(args []effective) effective {
	xs, bad := flatten(args)
	if bad != nil {
		return *bad
	}
	if len(xs) == 0 {
		return errEff("DIVIDE_BY_ZERO", "Evaluation of function AVERAGE caused a divide by zero error.")
	}
	return effective{Kind: kindNumber, Num: sum(xs) / float64(len(xs))}
}

func countFn(keep func(effective) bool) func([]effective) effective {
	return func(args []effective) effective {
		n := 0
		for _, a := range args {
			items := a.List
			if a.Kind != kindRange {
				items = []effective{a}
			}
			for _, v := range items {
				if keep(v) {
					n++
				}
			}
		}
		return effective{Kind: kindNumber, Num: float64(n)}
	}
}

func scalarArgs(args []effective, lo, hi int) (effective, bool) {
	if len(args) < lo || len(args) > hi {
		return errEff("N_A", "Wrong number of arguments."), false
	}
	if e, bad := firstError(args...); bad {
		return e, false
	}
	for _, a := range args {
		if a.Kind == kindRange {
			return errEff("VALUE", "A range is not allowed here."), false
		}
	}
	return effective{}, true
}

func unaryNum(f func(float64) float64) func([]effective) effective {
	return func(args []effective) effective {
		if e, ok := scalarArgs(args, 1, 1); !ok {
			return e
		}
		x, ok := toNumber(args[0])
		if !ok {
			return errEff("VALUE", "Function expects a number value.")
		}
		return effective{Kind: kindNumber, Num: f(x)}
	}
}

func roundFn(args []effective) effective {
	if e, ok := scalarArgs(args, 1, 2); !ok {
		return e
	}
	x, ok1 := toNumber(args[0])
	d := 0.0
	ok2 := true
	if len(args) == 2 {
		d, ok2 = toNumber(args[1])
	}
	if !ok1 || !ok2 {
		return errEff("VALUE", "Function ROUND expects number values.")
	}
	scale := math.Pow(10, math.Trunc(d))
	return effective{Kind: kindNumber, Num: math.Round(x*scale) / scale}
}

func ifFn(args []effective) effective {
	if len(args) < 2 || len(args) > 3 {
		return errEff("N_A", "Wrong number of arguments to IF.")
	}
	if args[0].Kind == kindError {
		return args[0]
	}
	cond, ok := toNumber(args[0])
	if !ok || args[0].Kind == kindRange {
		return errEff("VALUE", "Function IF expects a boolean condition.")
	}
	if cond != 0 {
		return args[1]
	}
	if len(args) == 3 {
		return args[2]
	}
	return effective{Kind: kindBool}
}

func logicFn(all bool) func([]effective) effective {
	return func(args []effective) effective {
		if e, ok := scalarArgs(args, 1, 255); !ok {
			return e
		}
		for _, a := range args {
			x, ok := toNumber(a)
			if !ok {
				return errEff("VALUE", "Logical function expects boolean values.")
			}
			if (x != 0) != all {
				return effective{Kind: kindBool, Bool: !all}
			}
		}
		return effective{Kind: kindBool, Bool: all}
	}
}

func notFn(args []effective) effective {
	if e, ok := scalarArgs(args, 1, 1); !ok {
		return e
	}
	x, ok := toNumber(args[0])
	if !ok {
		return errEff("VALUE", "Function NOT expects a boolean value.")
	}
	return effective{Kind: kindBool, Bool: x == 0}
}

func concatFn(args []effective) effective {
	var b strings.Builder
	for _, a := range args {
		items := a.List
		if a.Kind != kindRange {
			items = []effective{a}
		}
		for _, v := range items {
			if v.Kind == kindError {
				return v
			}
			b.WriteString(toText(v))
		}
	}
	return effective{Kind: kindString, Str: b.String()}
}

func textFn(f func(string) effective) func([]effective) effective {
	return func(args []effective) effective {
		if e, ok := scalarArgs(args, 1, 1); !ok {
			return e
		}
		return f(toText(args[0]))
	}
}
