package columnar

import (
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// arrowSchemaOf returns the Arrow schema a Parquet schema stands for, as
// Arrow readers map it (the rules of the Parquet format's
// LogicalTypes.md, "Lists", with its backward-compatibility rules): a group
// annotated LIST is a list of its repeated child, or of that child's one
// field unless the child is named "array" or "<list>_tuple"; any other
// repeated node is a list of itself; any other group is a struct; a leaf
// maps by its physical and logical type. A field is nullable when its node
// is optional. checkSchema reads the result, so that a Parquet file of the
// wrong shape is refused in the words used for Arrow files.
func arrowSchemaOf(sc *schema.Schema) (*arrow.Schema, error) {
	fields, err := arrowFieldsOf(sc.Root())
	if err != nil {
		return nil, err
	}
	return arrow.NewSchema(fields, nil), nil
}

// arrowFieldsOf maps the fields of the group g.
func arrowFieldsOf(g *schema.GroupNode) ([]arrow.Field, error) {
	fields := make([]arrow.Field, g.NumFields())
	for i := range fields {
		f, err := arrowFieldOf(g.Field(i))
		if err != nil {
			return nil, err
		}
		fields[i] = f
	}
	return fields, nil
}

// arrowFieldOf maps one node (see arrowSchemaOf).
func arrowFieldOf(n schema.Node) (arrow.Field, error) {
	g, isGroup := n.(*schema.GroupNode)
	if isGroup && isListGroup(g) {
		if g.RepetitionType() == parquet.Repetitions.Repeated {
			return arrow.Field{}, errors.New("LIST groups must not be repeated")
		}
		if g.NumFields() != 1 {
			return arrow.Field{}, errors.New("LIST groups must have only 1 child")
		}
		rep := g.Field(0)
		if rep.RepetitionType() != parquet.Repetitions.Repeated {
			return arrow.Field{}, errors.New("non-repeated nodes in a list group are not supported")
		}
		elem, err := listElement(g, rep)
		if err != nil {
			return arrow.Field{}, err
		}
		return arrow.Field{Name: g.Name(), Type: arrow.ListOfField(elem), Nullable: isOptional(g)}, nil
	}
	t, err := arrowTypeOf(n)
	if err != nil {
		return arrow.Field{}, err
	}
	if n.RepetitionType() == parquet.Repetitions.Repeated {
		return arrow.Field{Name: n.Name(), Type: arrow.ListOfField(arrow.Field{Name: n.Name(), Type: t})}, nil
	}
	return arrow.Field{Name: n.Name(), Type: t, Nullable: isOptional(n)}, nil
}

// listElement returns the element field of the LIST group g whose repeated
// child is rep.
func listElement(g *schema.GroupNode, rep schema.Node) (arrow.Field, error) {
	rg, ok := rep.(*schema.GroupNode)
	if ok && rg.NumFields() == 1 && rg.Name() != "array" && rg.Name() != g.Name()+"_tuple" {
		return arrowFieldOf(rg.Field(0))
	}
	t, err := arrowTypeOf(rep)
	if err != nil {
		return arrow.Field{}, err
	}
	return arrow.Field{Name: rep.Name(), Type: t}, nil
}

// arrowTypeOf maps a node's type, leaving its repetition aside.
func arrowTypeOf(n schema.Node) (arrow.DataType, error) {
	if g, ok := n.(*schema.GroupNode); ok {
		fields, err := arrowFieldsOf(g)
		if err != nil {
			return nil, err
		}
		return arrow.StructOf(fields...), nil
	}
	p := n.(*schema.PrimitiveNode)
	lt := p.LogicalType()
	switch p.PhysicalType() {
	case parquet.Types.Boolean:
		return arrow.FixedWidthTypes.Boolean, nil
	case parquet.Types.Int32, parquet.Types.Int64:
		return intType(p.PhysicalType(), lt), nil
	case parquet.Types.Float:
		return arrow.PrimitiveTypes.Float32, nil
	case parquet.Types.Double:
		return arrow.PrimitiveTypes.Float64, nil
	case parquet.Types.ByteArray:
		if _, ok := lt.(schema.StringLogicalType); ok {
			return arrow.BinaryTypes.String, nil
		}
		return arrow.BinaryTypes.Binary, nil
	case parquet.Types.FixedLenByteArray:
		return &arrow.FixedSizeBinaryType{ByteWidth: p.TypeLength()}, nil
	case parquet.Types.Int96:
		return arrow.FixedWidthTypes.Timestamp_ns, nil
	}
	return nil, errors.New("unsupported Parquet physical type " + p.PhysicalType().String())
}

// intTypes are the Arrow integer types by signedness and width 8, 16, 32, 64.
var intTypes = [2][4]arrow.DataType{
	{arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64},
	{arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64},
}

// intType maps an INT32 or INT64 leaf of logical type lt.
func intType(phys parquet.Type, lt schema.LogicalType) arrow.DataType {
	if it, ok := lt.(schema.IntLogicalType); ok {
		signed := 0
		if it.IsSigned() {
			signed = 1
		}
		switch it.BitWidth() {
		case 8:
			return intTypes[signed][0]
		case 16:
			return intTypes[signed][1]
		case 32:
			return intTypes[signed][2]
		case 64:
			return intTypes[signed][3]
		}
	}
	if phys == parquet.Types.Int32 {
		return arrow.PrimitiveTypes.Int32
	}
	return arrow.PrimitiveTypes.Int64
}

// isListGroup reports whether g is annotated as a LIST.
func isListGroup(g *schema.GroupNode) bool {
	if _, ok := g.LogicalType().(schema.ListLogicalType); ok {
		return true
	}
	return g.ConvertedType() == schema.ConvertedTypes.List
}

func isOptional(n schema.Node) bool { return n.RepetitionType() == parquet.Repetitions.Optional }
