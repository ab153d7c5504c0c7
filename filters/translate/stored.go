package translate

import (
	"context"

	"github.com/tidwall/sjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/runner"
)

// StoredResponse is the Response object of a stored response as it is now
// (GET /v1/responses/{id}, and the answer to its cancel): the final object
// once recorded, otherwise rebuilt from the run's state by p, the Responses
// chain's result mapping plugin (its map_result), so that it has the shape
// of the one in response.created and response.completed, whichever plugin
// is configured. It lives here, beside the stage that maps live results,
// so that the edge's handlers need nothing else of this stage: the run
// status to Response status map and the ids are this package's.
func StoredResponse(ctx context.Context, p filters.Mapper, rec runner.ResponseRecord, run runner.Run) ([]byte, error) {
	if len(rec.Object) > 0 {
		return rec.Object, nil
	}
	var res *runner.Result
	status := abi.ResultInProgress
	switch run.Status {
	case runner.StatusQueued:
		status = abi.ResultQueued
	case runner.StatusCompleted:
		status = abi.ResultCompleted
		res = &runner.Result{Text: run.Output}
		if run.Usage != nil {
			res.Usage = *run.Usage
		}
	case runner.StatusCancelled:
		status = abi.ResultCancelled
	case runner.StatusFailed:
		status = abi.ResultFailed
	}
	x := &filters.Exchange{Endpoint: filters.Responses, Echo: rec.Echo}
	in := resultInput(x, newReplyIDs(&run), status, res)
	obj, err := mapResultWith(ctx, p, &in)
	if err != nil || run.Error == nil {
		return obj, err
	}
	return sjson.SetBytes(obj, "error", map[string]string{"code": run.Error.Code, "message": run.Error.Message})
}
