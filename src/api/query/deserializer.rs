//! A query string as serde sees it: each typed query struct (or tuple of structs, one
//! per group of parameters a view shares) is read from the decoded `key=value` pairs.
//! Every value is text; booleans are `true`/`false`, enums their names; a failure names
//! the parameter at fault. The first fault in query order is the one answered, as a
//! reader going left to right would find it.

use std::fmt::Display;

use serde::de::value::StrDeserializer;
use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::forward_to_deserialize_any;

/// Why a query string was refused: the parameter at fault (when one is) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{why}")]
pub struct QueryError {
    pub parameter: Option<String>,
    pub why: String,
    /// The position of the parameter at fault in the query.
    at: Option<usize>,
}

impl QueryError {
    fn at(mut self, at: usize, parameter: &str) -> QueryError {
        if self.at.is_none() {
            self.at = Some(at);
            self.parameter = Some(parameter.to_string());
        }
        self
    }
}

impl de::Error for QueryError {
    fn custom<T: Display>(why: T) -> Self {
        QueryError {
            parameter: None,
            why: why.to_string(),
            at: None,
        }
    }

    fn unknown_variant(_: &str, expected: &'static [&'static str]) -> Self {
        Self::custom(format!("must be {}", one_of(expected)))
    }

    fn unknown_field(_: &str, _: &'static [&'static str]) -> Self {
        Self::custom("unknown parameter")
    }

    fn duplicate_field(_: &'static str) -> Self {
        Self::custom("is given twice")
    }
}

/// `a`, `a or b`, `a, b or c`.
fn one_of(names: &[&str]) -> String {
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// Reads `T` (a struct, or a tuple of structs) from `pairs`. A parameter no group
/// names, or one given twice, is refused where it stands.
pub fn deserialize<T: DeserializeOwned>(pairs: &[(String, String)]) -> Result<T, QueryError> {
    let mut groups = Vec::new();
    T::deserialize(Names(&mut groups))?;
    let mut owners = Vec::with_capacity(pairs.len());
    let mut first = None;
    for (i, (key, _)) in pairs.iter().enumerate() {
        let owner = groups
            .iter()
            .position(|fields| fields.contains(&key.as_str()));
        let why = match owner {
            None => "unknown parameter",
            Some(_) if pairs[..i].iter().any(|(k, _)| k == key) => "is given twice",
            Some(g) => {
                owners.push(g);
                continue;
            }
        };
        first = Some(<QueryError as de::Error>::custom(why).at(i, key));
        break;
    }
    // Each group stops at its own first fault; reading again up to it finds whether
    // another group has an earlier one.
    let mut end = owners.len();
    loop {
        let query = Query {
            pairs: &pairs[..end],
            owners: &owners[..end],
        };
        match T::deserialize(query) {
            Ok(t) => return first.map_or(Ok(t), Err),
            Err(e) => match e.at {
                Some(at) if at < end => {
                    end = at;
                    first = Some(e);
                }
                _ => return Err(e),
            },
        }
    }
}

/// Records the parameter names of each group (the fields serde hands a struct's
/// deserializer) without reading anything.
struct Names<'a>(&'a mut Vec<&'static [&'static str]>);

impl<'de> de::Deserializer<'de> for Names<'_> {
    type Error = QueryError;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, QueryError> {
        Err(de::Error::custom(
            "a query is read into a struct or a tuple of structs",
        ))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, QueryError> {
        self.0.push(fields);
        visitor.visit_map(Entries::default())
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _: usize,
        visitor: V,
    ) -> Result<V::Value, QueryError> {
        visitor.visit_seq(NamesOfGroups(self.0))
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq
        tuple_struct map enum identifier ignored_any
    }
}

struct NamesOfGroups<'a>(&'a mut Vec<&'static [&'static str]>);

impl<'de> SeqAccess<'de> for NamesOfGroups<'_> {
    type Error = QueryError;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, QueryError> {
        seed.deserialize(Names(self.0)).map(Some)
    }
}

/// The whole query: one struct, or a tuple with one struct per group.
struct Query<'a> {
    pairs: &'a [(String, String)],
    /// The group of each pair.
    owners: &'a [usize],
}

impl Query<'_> {
    fn group(&self, g: usize) -> Entries<'_> {
        let entries = self.pairs.iter().zip(self.owners).enumerate();
        Entries {
            pairs: entries
                .filter(|(_, (_, owner))| **owner == g)
                .map(|(at, ((k, v), _))| (at, k.as_str(), v.as_str()))
                .collect(),
            next: 0,
        }
    }
}

impl<'de> de::Deserializer<'de> for Query<'_> {
    type Error = QueryError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        visitor.visit_map(self.group(0))
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _: usize,
        visitor: V,
    ) -> Result<V::Value, QueryError> {
        visitor.visit_seq(Groups {
            query: self,
            next: 0,
        })
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq
        tuple_struct map struct enum identifier ignored_any
    }
}

struct Groups<'a> {
    query: Query<'a>,
    next: usize,
}

impl<'de> SeqAccess<'de> for Groups<'_> {
    type Error = QueryError;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, QueryError> {
        let group = self.query.group(self.next);
        self.next += 1;
        seed.deserialize(group).map(Some)
    }
}

/// The pairs of one group, each with its position in the query.
#[derive(Default)]
struct Entries<'a> {
    pairs: Vec<(usize, &'a str, &'a str)>,
    next: usize,
}

impl<'de> de::Deserializer<'de> for Entries<'_> {
    type Error = QueryError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        visitor.visit_map(self)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de> MapAccess<'de> for Entries<'_> {
    type Error = QueryError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, QueryError> {
        let Some(&(at, key, _)) = self.pairs.get(self.next) else {
            return Ok(None);
        };
        seed.deserialize(StrDeserializer::<QueryError>::new(key))
            .map(Some)
            .map_err(|e| e.at(at, key))
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<S::Value, QueryError> {
        let (at, key, value) = self.pairs[self.next];
        self.next += 1;
        seed.deserialize(Text(value)).map_err(|e| e.at(at, key))
    }
}

/// One parameter's value.
struct Text<'a>(&'a str);

impl<'de> de::Deserializer<'de> for Text<'_> {
    type Error = QueryError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        visitor.visit_str(self.0)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        match self.0 {
            "true" => visitor.visit_bool(true),
            "false" => visitor.visit_bool(false),
            _ => Err(de::Error::custom("must be true or false")),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, QueryError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, QueryError> {
        visitor.visit_enum(StrDeserializer::<QueryError>::new(self.0))
    }

    forward_to_deserialize_any! {
        i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}
