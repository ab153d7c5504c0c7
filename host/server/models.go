package server

import (
	"context"
	"net/http"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/model"
)

// modelCreated is the fixed creation time of the service model (2025-01-01),
// so the list is the same on every host and every start.
const modelCreated = "1735689600"

var modelsBody = []byte(`{"object":"list","data":[{"id":"` + model.ID +
	`","object":"model","created":` + modelCreated + `,"owned_by":"runedge"}]}`)

func serveModels(_ context.Context, x *filters.Exchange) error {
	return x.Reply.JSON(http.StatusOK, modelsBody)
}
