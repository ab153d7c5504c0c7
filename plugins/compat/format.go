package compat

// outputFormat is the structured-output choice both endpoints can make:
// chat's response_format and responses' text.format differ only in where the
// json_schema fields sit.
type outputFormat struct {
	jsonObject bool
	name       string // schema name, when schema is set
	schema     value  // JSON Schema object, when type is json_schema
}

// maxSchemaName is OpenAI's limit on a json_schema name.
const maxSchemaName = 64

// readFormat reads a format object f named param. holderParam names the
// object holding the json_schema fields: for chat, f.json_schema
// ("response_format.json_schema"); for responses, f itself (holderParam ==
// param). Callers pass both as constants so the happy path builds no strings.
func readFormat(f value, param, holderParam string) (outputFormat, error) {
	if f.IsNull() {
		return outputFormat{}, nil
	}
	if !f.IsObject() {
		return outputFormat{}, invalid(param, param+" must be an object with a type")
	}
	typ := f.Get("type")
	switch {
	case typ.Is("text"):
		return outputFormat{}, nil
	case typ.Is("json_object"):
		return outputFormat{jsonObject: true}, nil
	case !typ.Is("json_schema"):
		return outputFormat{}, invalid(param+".type", param+".type must be one of text, json_object or json_schema")
	}
	holder := f
	if holderParam != param {
		holder = f.Get("json_schema")
		if !holder.IsObject() {
			return outputFormat{}, invalid(holderParam, holderParam+" is required when type is json_schema and must be an object")
		}
	}
	var name, schema, strict value
	holder.Members(func(k, v value) bool {
		switch {
		case k.Is("name"):
			name = v
		case k.Is("schema"):
			schema = v
		case k.Is("strict"):
			strict = v
		}
		return true
	})
	if n := name.Str(); !name.IsString() || !validSchemaName(n) {
		return outputFormat{}, invalid(holderParam+".name",
			holderParam+".name is required: 1 to 64 letters, digits, underscores or dashes")
	}
	if !schema.IsObject() {
		return outputFormat{}, invalid(holderParam+".schema", holderParam+".schema must be a JSON Schema object")
	}
	if _, ok := strict.Bool(); !ok && !strict.IsNull() {
		return outputFormat{}, invalid(holderParam+".strict", holderParam+".strict must be a boolean")
	}
	return outputFormat{name: name.Str(), schema: schema}, nil
}

// validSchemaName applies OpenAI's rule for schema names; it also means the
// name can be written into JSON without escaping.
func validSchemaName(s string) bool {
	if s == "" || len(s) > maxSchemaName {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
