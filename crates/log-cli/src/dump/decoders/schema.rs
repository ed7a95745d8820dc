//! Kafka's message schema files (`common/message/*.json`), parsed: versions, flexible versions, fields,
//! tagged fields, nullable versions, defaults, nested structs. The data the generated Java classes are
//! made from; `reader` and `jackson` interpret it as those classes do.

use std::collections::HashMap;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::Value;

/// A version range as the schemas write it: `"3"`, `"3+"`, `"0-2"`, `"none"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Versions {
    low: i32,
    high: i32,
}

impl Versions {
    pub(super) const NONE: Self = Self { low: 1, high: 0 };

    pub(super) fn parse(s: &str) -> Result<Self> {
        let s = s.trim();
        if s == "none" {
            return Ok(Self::NONE);
        }
        let num = |t: &str| {
            t.trim()
                .parse::<i32>()
                .with_context(|| format!("bad version range {s:?}"))
        };
        if let Some(low) = s.strip_suffix('+') {
            return Ok(Self {
                low: num(low)?,
                high: i32::from(i16::MAX),
            });
        }
        if let Some((low, high)) = s.split_once('-') {
            return Ok(Self {
                low: num(low)?,
                high: num(high)?,
            });
        }
        let v = num(s)?;
        Ok(Self { low: v, high: v })
    }

    pub(super) fn contains(self, v: i16) -> bool {
        (self.low..=self.high).contains(&i32::from(v))
    }

    pub(super) fn lowest(self) -> i32 {
        self.low
    }

    pub(super) fn highest(self) -> i32 {
        self.high
    }
}

/// A field's type.
#[derive(Debug, Clone)]
pub(super) enum Type {
    Bool,
    Int8,
    Int16,
    Uint16,
    Int32,
    Uint32,
    Int64,
    Float64,
    Uuid,
    String,
    Bytes,
    Array(Box<Type>),
    Struct(Vec<Field>),
}

#[derive(Debug, Clone)]
pub(super) struct Field {
    /// As the JSON converter names it: the schema's name with its first letter in lower case.
    pub(super) json_name: String,
    pub(super) ty: Type,
    pub(super) versions: Versions,
    pub(super) nullable: Versions,
    pub(super) tagged: Versions,
    pub(super) tag: Option<u32>,
    /// The schema's `default`, as written (`None`: the type's zero).
    pub(super) default: Option<String>,
}

impl Field {
    /// Present and not tagged at `version`: read in order.
    pub(super) fn regular_in(&self, version: i16) -> bool {
        self.versions.contains(version) && !self.tagged.contains(version)
    }

    pub(super) fn tagged_in(&self, version: i16) -> bool {
        self.tag.is_some() && self.tagged.contains(version)
    }
}

/// One schema file: a coordinator key or value, a metadata record, a consumer protocol message.
#[derive(Debug, Clone)]
pub(super) struct Schema {
    pub(super) name: String,
    pub(super) api_key: Option<i16>,
    pub(super) kind: String,
    pub(super) valid: Versions,
    pub(super) flexible: Versions,
    pub(super) fields: Vec<Field>,
}

/// The schema files carry `//` comment lines (the license header, notes), which JSON lacks.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_string = false;
        let mut escaped = false;
        let mut cut = line.len();
        for (i, c) in line.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' if in_string => escaped = true,
                '"' => in_string = !in_string,
                '/' if !in_string && line.get(i..i + 2) == Some("//") => {
                    cut = i;
                    break;
                }
                _ => {}
            }
        }
        out.push_str(line.get(..cut).unwrap_or(line));
        out.push('\n');
    }
    out
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn versions_of(v: &Value, key: &str) -> Result<Option<Versions>> {
    str_of(v, key).map(Versions::parse).transpose()
}

fn lower_first(name: &str) -> String {
    let mut chars = name.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_ascii_lowercase().to_string() + chars.as_str()
    })
}

/// The structs a file defines, by name: inline (`"fields"` beside a struct type, reusable by
/// name elsewhere in the file) and in `commonStructs`.
type Structs<'a> = HashMap<&'a str, &'a Value>;

fn collect_structs<'a>(fields: &'a Value, into: &mut Structs<'a>) {
    for f in fields.as_array().into_iter().flatten() {
        if let (Some(ty), Some(sub)) = (str_of(f, "type"), f.get("fields")) {
            into.insert(ty.trim_start_matches("[]"), sub);
            collect_structs(sub, into);
        }
    }
}

fn parse_type(name: &str, field: &Value, structs: &Structs<'_>) -> Result<Type> {
    if let Some(element) = name.strip_prefix("[]") {
        return Ok(Type::Array(Box::new(parse_type(element, field, structs)?)));
    }
    Ok(match name {
        "bool" => Type::Bool,
        "int8" => Type::Int8,
        "int16" => Type::Int16,
        "uint16" => Type::Uint16,
        "int32" => Type::Int32,
        "uint32" => Type::Uint32,
        "int64" => Type::Int64,
        "float64" => Type::Float64,
        "uuid" => Type::Uuid,
        "string" => Type::String,
        "bytes" => Type::Bytes,
        _ if name.starts_with(|c: char| c.is_ascii_uppercase()) => {
            let fields = field
                .get("fields")
                .or_else(|| structs.get(name).copied())
                .with_context(|| format!("struct {name} has no fields"))?;
            Type::Struct(parse_fields(fields, structs)?)
        }
        _ => bail!("unknown field type {name:?}"),
    })
}

fn parse_fields(fields: &Value, structs: &Structs<'_>) -> Result<Vec<Field>> {
    let list = fields
        .as_array()
        .ok_or_else(|| anyhow!("fields is not an array"))?;
    list.iter().map(|f| parse_field(f, structs)).collect()
}

fn parse_field(f: &Value, structs: &Structs<'_>) -> Result<Field> {
    let name = str_of(f, "name").ok_or_else(|| anyhow!("a field without a name"))?;
    let ty_name = str_of(f, "type").with_context(|| format!("field {name} has no type"))?;
    let tagged = versions_of(f, "taggedVersions")?.unwrap_or(Versions::NONE);
    let versions = versions_of(f, "versions")?.unwrap_or(tagged);
    let tag = f
        .get("tag")
        .and_then(Value::as_u64)
        .map(u32::try_from)
        .transpose()?;
    let default = match f.get("default") {
        // A JSON null is no default at all (a struct's then is its empty struct, not null).
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => Some(other.to_string()),
    };
    Ok(Field {
        json_name: lower_first(name),
        ty: parse_type(ty_name, f, structs).with_context(|| format!("field {name}"))?,
        versions,
        nullable: versions_of(f, "nullableVersions")?.unwrap_or(Versions::NONE),
        tagged,
        tag,
        default,
    })
}

impl Schema {
    pub(super) fn parse(text: &str) -> Result<Self> {
        let v: Value = serde_json::from_str(&strip_comments(text))?;
        let name = str_of(&v, "name")
            .ok_or_else(|| anyhow!("a schema without a name"))?
            .to_owned();
        let mut structs = Structs::new();
        for common in v
            .get("commonStructs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let (Some(n), Some(sub)) = (str_of(common, "name"), common.get("fields")) {
                structs.insert(n, sub);
                collect_structs(sub, &mut structs);
            }
        }
        let fields = v.get("fields").unwrap_or(&Value::Null);
        collect_structs(fields, &mut structs);
        let api_key = v
            .get("apiKey")
            .and_then(Value::as_i64)
            .map(i16::try_from)
            .transpose()?;
        Ok(Self {
            kind: str_of(&v, "type").unwrap_or_default().to_owned(),
            valid: versions_of(&v, "validVersions")?.unwrap_or(Versions::NONE),
            flexible: versions_of(&v, "flexibleVersions")?.unwrap_or(Versions::NONE),
            fields: parse_fields(fields, &structs).with_context(|| format!("schema {name}"))?,
            api_key,
            name,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::{Versions, strip_comments};

    #[test]
    fn parses_version_ranges() {
        assert!(Versions::parse("3+").unwrap().contains(9));
        assert!(!Versions::parse("3+").unwrap().contains(2));
        assert!(Versions::parse("0-2").unwrap().contains(2));
        assert!(!Versions::parse("none").unwrap().contains(0));
        assert!(Versions::parse("4").unwrap().contains(4));
    }

    #[test]
    fn strips_line_comments_outside_strings() {
        assert_eq!(
            strip_comments("{ \"a\": \"x//y\" } // c\n// all\n"),
            "{ \"a\": \"x//y\" } \n\n"
        );
    }
}
