//! Runtimes that do not follow a memory change (pure): a JVM with a fixed maximum heap
//! (`-Xmx…` or `-XX:MaxHeapSize=…` in the command, the args, `JAVA_TOOL_OPTIONS`,
//! `JDK_JAVA_OPTIONS` or `JAVA_OPTS`, or the hub's `jvm-fixed-heap` flag) keeps its heap
//! whatever the limit, so its memory is audit-only (`JVMFixedHeap`); a JVM or Python
//! process sizes its heap or arenas at start, so an in-place memory change needs
//! `resizePolicy: RestartContainer` for memory to take effect (`RestartPolicyRequired`).

use super::values::fields_of;
use super::{Ctx, Finding};
use crate::cluster::{Container, RestartPolicy};
use crate::policy::Strategy;
use crate::wire::{EventResource, Reason};

/// The hub's flag for a workload whose JVM heap is fixed (seen where kerf's agent cannot
/// look, e.g. options baked into the image).
pub const JVM_FIXED_HEAP_FLAG: &str = "jvm-fixed-heap";

const JAVA_ENV: [&str; 3] = ["JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "JAVA_OPTS"];

/// What a container runs, as far as its spec tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runtime {
    /// `fixed_heap`: the option that fixes the heap, e.g. `-Xmx512m`.
    Jvm {
        fixed_heap: Option<String>,
    },
    Python,
    Other,
}

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split_whitespace()
        .map(|w| w.trim_matches(|c| c == '"' || c == '\''))
}

fn program(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// The image's name parts (`eclipse-temurin:21-jre` → eclipse, temurin, 21, jre).
fn image_words(image: &str) -> Vec<String> {
    let name = image.rsplit('/').next().unwrap_or(image);
    name.split([':', '-', '_', '.', '@'])
        .map(str::to_ascii_lowercase)
        .collect()
}

/// The runtime of `c`.
pub fn runtime(c: &Container) -> Runtime {
    let env = |name: &str| {
        c.env
            .iter()
            .find(|e| e.name == name)
            .and_then(|e| e.value.as_deref())
    };
    let mut tokens: Vec<&str> = c
        .command
        .iter()
        .chain(&c.args)
        .flat_map(|s| words(s))
        .collect();
    tokens.extend(JAVA_ENV.iter().filter_map(|n| env(n)).flat_map(words));
    let fixed = tokens
        .iter()
        .find(|t| {
            (t.starts_with("-Xmx") && t.len() > 4)
                || t.strip_prefix("-XX:MaxHeapSize=")
                    .is_some_and(|v| !v.is_empty())
        })
        .map(|t| t.to_string());
    let image = image_words(&c.image);
    // `openjdk17`, `jdk21`: a version glued to the name.
    let jvm_image = image.iter().any(|w| {
        matches!(
            w.trim_end_matches(|c: char| c.is_ascii_digit()),
            "java"
                | "openjdk"
                | "jdk"
                | "jre"
                | "temurin"
                | "corretto"
                | "zulu"
                | "graalvm"
                | "semeru"
                | "liberica"
        )
    });
    let has_env = |n: &str| c.env.iter().any(|e| e.name == n);
    let jvm = fixed.is_some()
        || jvm_image
        || tokens.iter().any(|t| program(t) == "java")
        || JAVA_ENV.iter().any(|n| has_env(n))
        || has_env("JAVA_HOME");
    if jvm {
        return Runtime::Jvm { fixed_heap: fixed };
    }
    let python_program = |t: &&str| {
        let p = program(t);
        p.starts_with("python")
            || matches!(p, "gunicorn" | "uvicorn" | "celery" | "uwsgi" | "daphne")
    };
    let python = tokens.iter().any(python_program)
        || image.iter().any(|w| w == "python" || w == "pypy")
        || ["PYTHONPATH", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE"]
            .iter()
            .any(|n| has_env(n));
    if python {
        Runtime::Python
    } else {
        Runtime::Other
    }
}

/// The containers of the change whose `resource` moves, with their spec.
fn moving<'a>(c: &'a Ctx, r: EventResource) -> impl Iterator<Item = &'a Container> + 'a {
    c.proposal
        .containers
        .iter()
        .filter(move |t| {
            fields_of(r)
                .iter()
                .any(|f| t.current.get(*f) != t.target.get(*f))
        })
        .filter_map(|t| c.input.live.containers.iter().find(|x| x.name == t.name))
}

/// `JVMFixedHeap`: memory of a JVM with a fixed maximum heap is audit-only.
pub fn jvm_fixed_heap(c: &Ctx, r: EventResource) -> Option<Finding> {
    if r != EventResource::Memory {
        return None;
    }
    let found = moving(c, r).find_map(|x| match runtime(x) {
        Runtime::Jvm {
            fixed_heap: Some(flag),
        } => Some((x.name.clone(), flag)),
        _ => None,
    });
    let (message, container, option) = match found {
        Some((name, flag)) => (
            format!("container {name} runs a JVM with a fixed maximum heap ({flag}): its heap does not follow a memory change, so memory is audit-only"),
            Some(name),
            Some(flag),
        ),
        None if c.recommendation.flags.iter().any(|f| f == JVM_FIXED_HEAP_FLAG) => (
            "the hub flags this workload jvm-fixed-heap: its JVM heap does not follow a memory change, so memory is audit-only".to_string(),
            None,
            None,
        ),
        None => return None,
    };
    let mut f = Finding::new(Reason::JVMFixedHeap, message).on(&[EventResource::Memory]);
    if let Some(name) = container {
        f = f.detail("container", name);
    }
    f = match option {
        Some(o) => f.detail("heapOption", o),
        None => f.detail("source", "hub"),
    };
    Some(f)
}

/// `RestartPolicyRequired`: an in-place memory change on a JVM or Python container that
/// would not be restarted to take it.
pub fn restart_policy_required(c: &Ctx, r: EventResource) -> Option<Finding> {
    if r != EventResource::Memory || c.strategy != Strategy::InPlace {
        return None;
    }
    let x = moving(c, r).find(|x| {
        x.resize_policy.memory != RestartPolicy::RestartContainer
            && matches!(runtime(x), Runtime::Jvm { .. } | Runtime::Python)
    })?;
    let what = match runtime(x) {
        Runtime::Python => "Python",
        _ => "JVM",
    };
    Some(
        Finding::new(
            Reason::RestartPolicyRequired,
            format!(
                "container {} runs {what}, which keeps its memory sizing until restarted; an in-place memory change needs resizePolicy RestartContainer for memory (or the rollout strategy)",
                x.name
            ),
        )
        .on(&[EventResource::Memory])
        .detail("container", &x.name)
        .detail("runtime", what),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::EnvVar;

    fn c(image: &str, command: &[&str], env: &[(&str, &str)]) -> Container {
        Container {
            name: "app".into(),
            image: image.into(),
            command: command.iter().map(|s| s.to_string()).collect(),
            env: env
                .iter()
                .map(|(n, v)| EnvVar {
                    name: n.to_string(),
                    value: Some(v.to_string()),
                })
                .collect(),
            ..Container::default()
        }
    }

    #[test]
    fn runtimes_are_told_from_command_env_and_image() {
        let fixed = |v: &str| Runtime::Jvm {
            fixed_heap: Some(v.into()),
        };
        let rows: Vec<(Container, Runtime)> = vec![
            (
                c("shop/api:1", &["java", "-Xmx512m", "-jar", "a.jar"], &[]),
                fixed("-Xmx512m"),
            ),
            (
                c(
                    "shop/api:1",
                    &["sh", "-c", "exec java -XX:MaxHeapSize=1g -jar a.jar"],
                    &[],
                ),
                fixed("-XX:MaxHeapSize=1g"),
            ),
            (
                c("shop/api:1", &[], &[("JAVA_TOOL_OPTIONS", "-Xss1m -Xmx2g")]),
                fixed("-Xmx2g"),
            ),
            (
                c("shop/api:1", &[], &[("JDK_JAVA_OPTIONS", "-Xmx300m")]),
                fixed("-Xmx300m"),
            ),
            (
                c("shop/api:1", &[], &[("JAVA_OPTS", "\"-Xmx1g\"")]),
                fixed("-Xmx1g"),
            ),
            (
                c(
                    "eclipse-temurin:21-jre",
                    &[],
                    &[("JAVA_OPTS", "-XX:MaxRAMPercentage=75")],
                ),
                Runtime::Jvm { fixed_heap: None },
            ),
            (
                c("registry/openjdk17:latest", &[], &[]),
                Runtime::Jvm { fixed_heap: None },
            ),
            (c("python:3.12-slim", &[], &[]), Runtime::Python),
            (
                c("shop/web:1", &["gunicorn", "app:app"], &[]),
                Runtime::Python,
            ),
            (
                c("shop/web:1", &["/usr/local/bin/python3", "-m", "web"], &[]),
                Runtime::Python,
            ),
            (
                c("nginx:1.27", &["nginx", "-g", "daemon off;"], &[]),
                Runtime::Other,
            ),
            (
                c("shop/javascript-ui:1", &["node", "server.js"], &[]),
                Runtime::Other,
            ),
        ];
        for (container, want) in rows {
            assert_eq!(runtime(&container), want, "{container:?}");
        }
    }
}
