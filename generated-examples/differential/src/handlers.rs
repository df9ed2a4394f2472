//! The `Differential` server's tools (user-owned: mcpgen adds stubs here when the spec grows):
//! every tool answers the typed arguments it received, serialised back to JSON text, so the
//! differential test (`peers/tests/python/test_differential.py`) sees exactly what reached the
//! user's code. A stub mcpgen appends for a new corpus tool becomes `echo(&args)`.

use crate::generated::types;
use crate::generated::{Context, Resolvers, ToolError, Tools};

/// The typed arguments as JSON text (what the tool's handler received).
fn echo<T: serde::Serialize>(args: &T) -> Result<String, ToolError> {
    serde_json::to_string(args)
        .map_err(|e| ToolError::Internal(format!("serialising the arguments: {e}")))
}

/// Server-wide state, shared by every call (add fields: configuration, pools, ...).
#[derive(Debug, Default)]
pub struct Differential {}

impl Resolvers for Differential {}

impl Tools for Differential {
    async fn type_string(
        &self,
        _ctx: &Context,
        args: types::TypeStringArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn type_integer(
        &self,
        _ctx: &Context,
        args: types::TypeIntegerArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn type_number(
        &self,
        _ctx: &Context,
        args: types::TypeNumberArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn type_boolean(
        &self,
        _ctx: &Context,
        args: types::TypeBooleanArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn type_null(
        &self,
        _ctx: &Context,
        args: types::TypeNullArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn type_array(
        &self,
        _ctx: &Context,
        args: types::TypeArrayArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn type_object(
        &self,
        _ctx: &Context,
        args: types::TypeObjectArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn type_union(
        &self,
        _ctx: &Context,
        args: types::TypeUnionArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn type_union_wide(
        &self,
        _ctx: &Context,
        args: types::TypeUnionWideArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn type_any(
        &self,
        _ctx: &Context,
        args: types::TypeAnyArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn enum_strings(
        &self,
        _ctx: &Context,
        args: types::EnumStringsArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn const_string(
        &self,
        _ctx: &Context,
        args: types::ConstStringArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn const_object(
        &self,
        _ctx: &Context,
        args: types::ConstObjectArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn multiple_of_number(
        &self,
        _ctx: &Context,
        args: types::MultipleOfNumberArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn multiple_of_integer(
        &self,
        _ctx: &Context,
        args: types::MultipleOfIntegerArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn range_inclusive(
        &self,
        _ctx: &Context,
        args: types::RangeInclusiveArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn range_exclusive(
        &self,
        _ctx: &Context,
        args: types::RangeExclusiveArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn range_number_inclusive(
        &self,
        _ctx: &Context,
        args: types::RangeNumberInclusiveArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn string_length(
        &self,
        _ctx: &Context,
        args: types::StringLengthArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn pattern(&self, _ctx: &Context, args: types::PatternArgs) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn pattern_unanchored(
        &self,
        _ctx: &Context,
        args: types::PatternUnanchoredArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn pattern_unicode(
        &self,
        _ctx: &Context,
        args: types::PatternUnicodeArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn pattern_code_points(
        &self,
        _ctx: &Context,
        args: types::PatternCodePointsArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn format_email(
        &self,
        _ctx: &Context,
        args: types::FormatEmailArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn format_idn_email(
        &self,
        _ctx: &Context,
        args: types::FormatIdnEmailArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn format_uri(
        &self,
        _ctx: &Context,
        args: types::FormatUriArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn format_uri_reference(
        &self,
        _ctx: &Context,
        args: types::FormatUriReferenceArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn format_uuid(
        &self,
        _ctx: &Context,
        args: types::FormatUuidArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn format_date(
        &self,
        _ctx: &Context,
        args: types::FormatDateArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn format_time(
        &self,
        _ctx: &Context,
        args: types::FormatTimeArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn format_date_time(
        &self,
        _ctx: &Context,
        args: types::FormatDateTimeArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn format_duration(
        &self,
        _ctx: &Context,
        args: types::FormatDurationArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn format_ipv4(
        &self,
        _ctx: &Context,
        args: types::FormatIpv4Args,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn format_ipv6(
        &self,
        _ctx: &Context,
        args: types::FormatIpv6Args,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn format_hostname(
        &self,
        _ctx: &Context,
        args: types::FormatHostnameArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn format_regex(
        &self,
        _ctx: &Context,
        args: types::FormatRegexArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn items(&self, _ctx: &Context, args: types::ItemsArgs) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn prefix_items_open(
        &self,
        _ctx: &Context,
        args: types::PrefixItemsOpenArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn prefix_items_closed(
        &self,
        _ctx: &Context,
        args: types::PrefixItemsClosedArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn prefix_items_tuple(
        &self,
        _ctx: &Context,
        args: types::PrefixItemsTupleArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn prefix_items_extra(
        &self,
        _ctx: &Context,
        args: types::PrefixItemsExtraArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn array_size(
        &self,
        _ctx: &Context,
        args: types::ArraySizeArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn unique_items(
        &self,
        _ctx: &Context,
        args: types::UniqueItemsArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn unique_strings(
        &self,
        _ctx: &Context,
        args: types::UniqueStringsArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn map_of_integers(
        &self,
        _ctx: &Context,
        args: types::MapOfIntegersArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn all_of(&self, _ctx: &Context, args: types::AllOfArgs) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn any_of(&self, _ctx: &Context, args: types::AnyOfArgs) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn one_of(&self, _ctx: &Context, args: types::OneOfArgs) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn one_of_tagged(
        &self,
        _ctx: &Context,
        args: types::OneOfTaggedArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn any_of_tagged_inline(
        &self,
        _ctx: &Context,
        args: types::AnyOfTaggedInlineArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn any_of_mixed(
        &self,
        _ctx: &Context,
        args: types::AnyOfMixedArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn ref_defs(
        &self,
        _ctx: &Context,
        args: types::RefDefsArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn ref_nested(
        &self,
        _ctx: &Context,
        args: types::RefNestedArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn ref_recursive_list(
        &self,
        _ctx: &Context,
        args: types::RefRecursiveListArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn ref_array_of_defs(
        &self,
        _ctx: &Context,
        args: types::RefArrayOfDefsArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn nullable_string(
        &self,
        _ctx: &Context,
        args: types::NullableStringArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn nullable_ref(
        &self,
        _ctx: &Context,
        args: types::NullableRefArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn properties_required(
        &self,
        _ctx: &Context,
        args: types::PropertiesRequiredArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn closed_object(
        &self,
        _ctx: &Context,
        args: types::ClosedObjectArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn additional_schema(
        &self,
        _ctx: &Context,
        args: types::AdditionalSchemaArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn pattern_properties(
        &self,
        _ctx: &Context,
        args: ::serde_json::Map<String, ::serde_json::Value>,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn property_names(
        &self,
        _ctx: &Context,
        args: ::serde_json::Map<String, ::serde_json::Value>,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn object_size(
        &self,
        _ctx: &Context,
        args: ::serde_json::Map<String, ::serde_json::Value>,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn dependent_required(
        &self,
        _ctx: &Context,
        args: types::DependentRequiredArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn dependent_schemas(
        &self,
        _ctx: &Context,
        args: types::DependentSchemasArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn nested_objects(
        &self,
        _ctx: &Context,
        args: types::NestedObjectsArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn property_name_keywords(
        &self,
        _ctx: &Context,
        args: types::PropertyNameKeywordsArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn all_of_objects(
        &self,
        _ctx: &Context,
        args: types::AllOfObjectsArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn not_required(
        &self,
        _ctx: &Context,
        args: types::NotRequiredArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn ref_recursive_root(
        &self,
        _ctx: &Context,
        args: types::Tree,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn nullable_properties(
        &self,
        _ctx: &Context,
        args: types::NullablePropertiesArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn defaults(
        &self,
        _ctx: &Context,
        args: types::DefaultsArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn integers_as_floats(
        &self,
        _ctx: &Context,
        args: types::IntegersAsFloatsArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn formats_in_structures(
        &self,
        _ctx: &Context,
        args: types::FormatsInStructuresArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn ref_with_siblings(
        &self,
        _ctx: &Context,
        args: types::RefWithSiblingsArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn array_of_unions(
        &self,
        _ctx: &Context,
        args: types::ArrayOfUnionsArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn const_number(
        &self,
        _ctx: &Context,
        args: types::ConstNumberArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn enum_integers(
        &self,
        _ctx: &Context,
        args: types::EnumIntegersArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn nullable_enum(
        &self,
        _ctx: &Context,
        args: types::NullableEnumArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn required_undeclared(
        &self,
        _ctx: &Context,
        args: types::RequiredUndeclaredArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn boolean_subschemas(
        &self,
        _ctx: &Context,
        args: types::BooleanSubschemasArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn enum_punctuation(
        &self,
        _ctx: &Context,
        args: types::EnumPunctuationArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn enum_mixed(
        &self,
        _ctx: &Context,
        args: types::EnumMixedArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn contains(
        &self,
        _ctx: &Context,
        args: types::ContainsArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn contains_bounds(
        &self,
        _ctx: &Context,
        args: types::ContainsBoundsArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn contains_min_zero(
        &self,
        _ctx: &Context,
        args: types::ContainsMinZeroArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn not_type(
        &self,
        _ctx: &Context,
        args: types::NotTypeArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn if_then(&self, _ctx: &Context, args: types::IfThenArgs) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn if_then_else(
        &self,
        _ctx: &Context,
        args: types::IfThenElseArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn if_then_required(
        &self,
        _ctx: &Context,
        args: types::IfThenRequiredArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn pattern_properties_typed(
        &self,
        _ctx: &Context,
        args: types::PatternPropertiesTypedArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn property_names_collide(
        &self,
        _ctx: &Context,
        args: types::PropertyNamesCollideArgs,
    ) -> Result<String, ToolError> {
        echo(&args)
    }

    async fn ref_input(&self, _ctx: &Context, args: types::Point) -> Result<String, ToolError> {
        echo(&args)
    }
}
