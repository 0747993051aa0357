package emulator

import "strings"

// maskNode is a parsed field mask: nil children = keep the whole value.
type maskNode map[string]maskNode

// parseFieldMask parses Google's partial-response syntax:
// "a.b,c/d", "sheets(properties(title,sheetId))", "*".
func parseFieldMask(s string) maskNode {
	p := &maskParser{s: s}
	return p.list()
}

type maskParser struct {
	s   string
	pos int
}

func (p *maskParser) list() maskNode {
	root := maskNode{}
	for p.pos < len(p.s) && p.s[p.pos] != ')' {
		p.item(root)
		if p.pos < len(p.s) && p.s[p.pos] == ',' {
			p.pos++
		}
	}
	return root
}

func (p *maskParser) item(into maskNode) {
	node := into
	var last string
	for {
		name := p.name()
		if name == "" {
			return
		}
		if last != "" {
			node = child(node, last)
		}
		last = name
		if p.pos < len(p.s) && (p.s[p.pos] == '.' || p.s[p.pos] == '/') {
			p.pos++
			continue
		}
		break
	}
	if p.pos < len(p.s) && p.s[p.pos] == '(' {
		p.pos++
		sub := p.list()
		if p.pos < len(p.s) {
			p.pos++
		}
		dst := child(node, last)
		for k, v := range sub {
			dst[k] = v
		}
		return
	}
	if _, ok := node[last]; !ok {
		node[last] = nil
	}
}

func child(n maskNode, name string) maskNode {
	if c, ok := n[name]; ok && c != nil {
		return c
	}
	c := maskNode{}
	n[name] = c
	return c
}

func (p *maskParser) name() string {
	start := p.pos
	for p.pos < len(p.s) && !strings.ContainsRune(".,/()", rune(p.s[p.pos])) {
		p.pos++
	}
	return strings.TrimSpace(p.s[start:p.pos])
}

// mentions reports whether the mask selects anything under the dotted path.
func (n maskNode) mentions(path ...string) bool {
	node := n
	for _, k := range path {
		if node == nil {
			return true
		}
		if _, ok := node["*"]; ok {
			return true
		}
		c, ok := node[k]
		if !ok {
			return false
		}
		node = c
	}
	return true
}

// apply keeps only the masked parts of v (maps filtered, lists mapped).
func (n maskNode) apply(v any) any {
	if n == nil {
		return v
	}
	if _, ok := n["*"]; ok {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, sub := range n {
			if val, ok := x[k]; ok {
				out[k] = sub.apply(val)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, el := range x {
			out[i] = n.apply(el)
		}
		return out
	}
	return v
}

// trimGridData drops trailing empty cells and rows left after masking.
func trimGridData(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if k == "rowData" || k == "values" {
				if list, ok := val.([]any); ok {
					for _, el := range list {
						trimGridData(el)
					}
					list = trimEmptyTail(list)
					if len(list) == 0 {
						delete(x, k)
					} else {
						x[k] = list
					}
					continue
				}
			}
			trimGridData(val)
		}
	case []any:
		for _, el := range x {
			trimGridData(el)
		}
	}
}

func trimEmptyTail(list []any) []any {
	for len(list) > 0 {
		m, ok := list[len(list)-1].(map[string]any)
		if !ok || len(m) > 0 {
			break
		}
		list = list[:len(list)-1]
	}
	return list
}
