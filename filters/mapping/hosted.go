package mapping

import (
	"strconv"

	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/runner/native"
)

// Hosted is what the stage does with the hosted tools (web_search, mcp …)
// that the mapping withheld from the model (the native request's
// withheld_tools): the agent cannot run them, so by default the request is
// served without them and each is counted; Refuse (tools.hosted: refuse)
// refuses the request instead, for operators who would rather a client
// learn at once that its hosted tools do nothing here.
type Hosted struct {
	Refuse bool
	// Count, when set, is called once per withheld tool with its type.
	Count func(typ string)
}

// check applies the policy to the withheld tools.
func (h Hosted) check(withheld []native.WithheldTool) error {
	if len(withheld) == 0 {
		return nil
	}
	if h.Refuse {
		w := withheld[0]
		param := "tools[" + strconv.Itoa(w.Index) + "].type"
		return apierr.Param(apierr.CodeUnsupportedParameter, param, w.Type+" is a hosted tool this service cannot run (tools.hosted: refuse): only function, custom and namespace tools are supported")
	}
	if h.Count != nil {
		for _, w := range withheld {
			h.Count(w.Type)
		}
	}
	return nil
}
