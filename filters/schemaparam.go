package filters

// SchemaParam is the request field that holds the structured-output JSON
// Schema on endpoint ep, which errors about the schema name as their param.
func SchemaParam(ep Endpoint) string {
	switch ep {
	case ChatCompletions:
		return "response_format.json_schema.schema"
	case Native:
		return "output_schema"
	}
	return "text.format.schema"
}
