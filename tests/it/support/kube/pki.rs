//! The control plane's key material, generated per run: a cluster CA and the API
//! server's serving certificate, a front-proxy CA and client, the service-account
//! signing key, static tokens, and kubeconfigs for the controller-manager and scheduler.

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};

/// One static-token identity of the test cluster.
pub struct Identity {
    pub token: String,
    pub user: &'static str,
    pub groups: &'static [&'static str],
}

/// The identities the harness creates (token file rows).
pub struct Tokens {
    pub admin: Identity,
    pub agent: Identity,
    pub unprivileged: Identity,
    pub controller_manager: Identity,
    pub scheduler: Identity,
}

/// The kerf agent's identity: what a service account `kerf-system/kerf-agent` would be.
pub const AGENT_USER: &str = "system:serviceaccount:kerf-system:kerf-agent";

fn token(tag: &str) -> String {
    format!("{tag}-{}", uuid::Uuid::new_v4().simple())
}

impl Tokens {
    fn new() -> Tokens {
        Tokens {
            admin: Identity {
                token: token("admin"),
                user: "kerf-test-admin",
                groups: &["system:masters"],
            },
            agent: Identity {
                token: token("agent"),
                user: AGENT_USER,
                groups: &[
                    "system:serviceaccounts",
                    "system:serviceaccounts:kerf-system",
                ],
            },
            unprivileged: Identity {
                token: token("jane"),
                user: "jane",
                groups: &[],
            },
            controller_manager: Identity {
                token: token("kcm"),
                user: "system:kube-controller-manager",
                groups: &[],
            },
            scheduler: Identity {
                token: token("sched"),
                user: "system:kube-scheduler",
                groups: &[],
            },
        }
    }

    fn csv(&self) -> String {
        [
            &self.admin,
            &self.agent,
            &self.unprivileged,
            &self.controller_manager,
            &self.scheduler,
        ]
        .iter()
        .map(|i| {
            format!(
                "{},{},{},\"{}\"\n",
                i.token,
                i.user,
                i.user,
                i.groups.join(",")
            )
        })
        .collect()
    }
}

/// Paths of everything written into the run directory.
pub struct Pki {
    pub ca_cert: PathBuf,
    pub ca_key: PathBuf,
    pub ca_pem: String,
    pub serving_cert: PathBuf,
    pub serving_key: PathBuf,
    pub front_proxy_ca: PathBuf,
    pub front_proxy_cert: PathBuf,
    pub front_proxy_key: PathBuf,
    pub sa_key: PathBuf,
    pub sa_pub: PathBuf,
    pub token_file: PathBuf,
    pub tokens: Tokens,
    /// The sim kubelets' serving certificate and key (PEM), signed by the cluster CA
    /// for 127.0.0.1, as a kubelet's with `serverTLSBootstrap`.
    pub kubelet_cert_pem: String,
    pub kubelet_key_pem: String,
}

fn ca(name: &str) -> CertifiedIssuer<'static, KeyPair> {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("ca params");
    params.distinguished_name.push(DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    CertifiedIssuer::self_signed(params, KeyPair::generate().expect("ca key")).expect("self-sign")
}

fn leaf(
    issuer: &CertifiedIssuer<'static, KeyPair>,
    cn: &str,
    sans: Vec<String>,
    usage: ExtendedKeyUsagePurpose,
) -> (String, String) {
    let mut params = CertificateParams::new(sans).expect("leaf params");
    params.distinguished_name.push(DnType::CommonName, cn);
    params.extended_key_usages = vec![usage];
    let key = KeyPair::generate().expect("leaf key");
    let cert = params.signed_by(&key, issuer).expect("sign leaf");
    (cert.pem(), key.serialize_pem())
}

/// Writes `name` whole or not at all: tests running in parallel write the same
/// kubeconfig while others read it, so a reader must never see half a file.
fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let path = dir.join(name);
    let n = SERIAL.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let tmp = dir.join(format!(".{name}.{n}"));
    std::fs::write(&tmp, text).unwrap_or_else(|e| panic!("write {}: {e}", tmp.display()));
    std::fs::rename(&tmp, &path).unwrap_or_else(|e| panic!("rename {}: {e}", path.display()));
    path
}

impl Pki {
    pub fn generate(dir: &Path) -> Pki {
        let cluster_ca = ca("kerf-test-ca");
        let (serving, serving_key) = leaf(
            &cluster_ca,
            "kube-apiserver",
            vec![
                "127.0.0.1".into(),
                "localhost".into(),
                "kubernetes".into(),
                "kubernetes.default".into(),
                "kubernetes.default.svc".into(),
                "10.96.0.1".into(),
            ],
            ExtendedKeyUsagePurpose::ServerAuth,
        );
        let proxy_ca = ca("kerf-test-front-proxy-ca");
        let (proxy, proxy_key) = leaf(
            &proxy_ca,
            "front-proxy-client",
            vec![],
            ExtendedKeyUsagePurpose::ClientAuth,
        );
        let (kubelet_cert_pem, kubelet_key_pem) = leaf(
            &cluster_ca,
            "system:node:sim",
            vec!["127.0.0.1".into(), "localhost".into()],
            ExtendedKeyUsagePurpose::ServerAuth,
        );
        let sa = KeyPair::generate().expect("service-account key");
        let tokens = Tokens::new();
        let ca_pem = cluster_ca.pem();
        Pki {
            ca_cert: write(dir, "ca.crt", &ca_pem),
            ca_key: write(dir, "ca.key", &cluster_ca_key_pem(&cluster_ca)),
            ca_pem,
            serving_cert: write(dir, "apiserver.crt", &serving),
            serving_key: write(dir, "apiserver.key", &serving_key),
            front_proxy_ca: write(dir, "front-proxy-ca.crt", &proxy_ca.pem()),
            front_proxy_cert: write(dir, "front-proxy-client.crt", &proxy),
            front_proxy_key: write(dir, "front-proxy-client.key", &proxy_key),
            sa_key: write(dir, "sa.key", &sa.serialize_pem()),
            sa_pub: write(dir, "sa.pub", &sa.public_key_pem()),
            token_file: write(dir, "tokens.csv", &tokens.csv()),
            tokens,
            kubelet_cert_pem,
            kubelet_key_pem,
        }
    }

    /// A kubeconfig file for `token` against `server` (for the components).
    pub fn kubeconfig(&self, dir: &Path, name: &str, server: &str, token: &str) -> PathBuf {
        write(
            dir,
            &format!("{name}.kubeconfig"),
            &self.kubeconfig_text(name, server, token),
        )
    }

    /// The kubeconfig text, for clients built in memory (parallel tests must not share a
    /// file being rewritten).
    pub fn kubeconfig_text(&self, name: &str, server: &str, token: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n    server: {server}\n    certificate-authority: {ca}\nusers:\n- name: {name}\n  user:\n    token: {token}\ncontexts:\n- name: test\n  context:\n    cluster: test\n    user: {name}\ncurrent-context: test\n",
            ca = self.ca_cert.display()
        )
    }
}

fn cluster_ca_key_pem(ca: &CertifiedIssuer<'static, KeyPair>) -> String {
    ca.key().serialize_pem()
}
