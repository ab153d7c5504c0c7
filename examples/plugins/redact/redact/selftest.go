package redact

import (
	"errors"

	"github.com/runedge/runedge/plugins/compat"
	"github.com/tidwall/gjson"
)

// The self-test's golden case.
const (
	selfTestText     = "Mail jane.doe@example.com or call +1 (555) 123-4567."
	selfTestRedacted = "Mail " + EmailPlaceholder + " or call " + PhonePlaceholder + "."
	selfTestResult   = `{"endpoint":"responses","id":"resp_1","message_id":"msg_1","created":1700000000,"model":"service",` +
		`"status":"completed","result":{"text":"` + selfTestText + `","finish_reason":"stop"},"echo":{}}`
)

// SelfTest is the self_test hook, run when the host loads the plugin: the
// default mapping must work, and a golden text must come out redacted both
// whole and streamed in pieces that split the address and the number.
func SelfTest() error {
	if err := compat.SelfTest(); err != nil {
		return err
	}
	reply, err := MapResult([]byte(selfTestResult))
	if err != nil {
		return errors.New("redact self-test: map_result: " + err.Error())
	}
	if got := gjson.GetBytes(reply, "output.0.content.0.text").String(); got != selfTestRedacted {
		return errors.New("redact self-test: map_result gave " + got)
	}
	var streamed, hold string
	for i, piece := range []string{"Mail jane.d", "oe@example.com or call +1 (5", "55) 123", "-4567."} {
		var emit string
		emit, hold = Stream(hold+piece, i == 3)
		streamed += emit
	}
	if streamed != selfTestRedacted || hold != "" {
		return errors.New("redact self-test: streaming gave " + streamed)
	}
	return nil
}
