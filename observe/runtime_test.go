package observe_test

import "runtime"

func runtimeVersion() string { return runtime.Version() }
