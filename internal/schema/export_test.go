package schema

// LoadNode lets the sweep test load YAML trees it changed in place.
var LoadNode = loadNode

// Small valid schemas, as seeds for the fuzz targets of package schema_test.
const (
	BaseSchema      = base
	VersionedSchema = versioned
)
