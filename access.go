package hikoutei

import "github.com/hikoutei/hikoutei-go/internal/engine"

// The module's own tools (cmd/hikoutei, the demo, the crash campaign) and
// the hikouteitest harness reach a Store's engine through engine.Of; an
// application only sees the API of this package.
func init() {
	engine.RegisterStore(func(v any) *engine.Engine {
		if s, ok := v.(*Store); ok {
			return s.e
		}
		return nil
	})
}
