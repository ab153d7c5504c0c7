package api

import (
	"context"
	"net/http"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/model"
	"github.com/runedge/runedge/internal/contract"
)

// modelCreated is the fixed creation time of the service model (2025-01-01),
// so the list is the same on every host and every start.
const modelCreated = "1735689600"

// modelBody is the one model object; GET /v1/models lists it and GET
// /v1/models/service returns it (the SDKs' models.retrieve, which some
// clients call to check a model before using it).
const modelBody = `{"id":"` + contract.ModelID + `","object":"model","created":` + modelCreated + `,"owned_by":"runedge"}`

var (
	modelsBody = []byte(`{"object":"list","data":[` + modelBody + `]}`)
	modelJSON  = []byte(modelBody)
)

// Models answers both model paths: the list, or the model named by
// the path, which must be the only one.
func Models(_ context.Context, x *filters.Exchange) error {
	if x.Request.Pattern != "/v1/models/{model}" {
		return x.Reply.JSON(http.StatusOK, modelsBody)
	}
	if name := x.Request.PathValue("model"); name != contract.ModelID {
		return model.NotFound(name)
	}
	return x.Reply.JSON(http.StatusOK, modelJSON)
}
