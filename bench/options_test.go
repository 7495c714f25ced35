package bench

import (
	"slices"
	"strings"
	"testing"
)

// TestOptionsReplicas: --url and --pid name one shop or its replicas; a
// run with a purchase measures the floor's flow.
func TestOptionsReplicas(t *testing.T) {
	o := Options{URL: "http://127.0.0.1:1/mcp,http://127.0.0.1:2/mcp", PID: 10, OtherPIDs: []int{11},
		Clients: 8, Duration: DefaultDuration, Items: 3, Scenario: ScenarioPurchase}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := o.urls(); len(got) != 2 || got[1] != "http://127.0.0.1:2/mcp" {
		t.Errorf("urls %v", got)
	}
	if got := o.pids(); !slices.Equal(got, []int{10, 11}) {
		t.Errorf("pids %v", got)
	}
	if !o.wantsFloorFlow() {
		t.Error("a purchase run without the floor's flow")
	}
	for _, c := range []struct {
		edit func(*Options)
		want string
	}{
		{func(o *Options) { o.URL = "http://127.0.0.1:1/mcp,127.0.0.1:2" }, `--url "127.0.0.1:2"`},
		{func(o *Options) { o.OtherPIDs = []int{0} }, "--pid"},
	} {
		bad := o
		c.edit(&bad)
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate = %v, want an error naming %s", err, c.want)
		}
	}
	o.Scenario, o.OtherPIDs = ScenarioSearch, nil
	if o.wantsFloorFlow() || slices.Equal(o.pids(), []int{10, 11}) {
		t.Error("a search run measures the floor's flow, or kept the other replica")
	}
}
