//! Where OAuth requests may go (`docs/oauth.md`, "Addresses"): discovery, registration and token
//! requests are never sent to link-local or cloud-metadata addresses, and a document from one
//! server cannot send them into a private or loopback network the person did not name.
//!
//! Every address has a [`Class`]. The MCP server's own URL fixes a [`Reach`]: public addresses
//! are always allowed, a loopback or private address only when the MCP server itself is of that
//! class, and [`Class::Blocked`] never. URLs are checked before each request ([`Reach::check`]),
//! redirects are checked as they are followed, and the clients of [`Reach::client`] filter what
//! a name resolves to when they connect, so a name cannot be rebound to a forbidden address
//! after it was checked.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use url::{Host, Url};

/// What kind of network an address belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    Public,
    /// 10/8, 172.16/12, 192.168/16, 100.64/10 and IPv6 unique-local addresses.
    Private,
    /// 127/8, `::1`, `localhost` and names under `.localhost`.
    Loopback,
    /// Link-local (169.254/16 and fe80::/10, cloud instance metadata among them), the known
    /// metadata addresses and names, unspecified, multicast, broadcast and reserved addresses.
    Blocked,
}

impl Class {
    /// The class of an IP address; IPv6 forms that embed an IPv4 address take its class.
    pub fn of(ip: IpAddr) -> Class {
        match ip {
            IpAddr::V4(v4) => of_v4(v4),
            IpAddr::V6(v6) => match embedded_v4(v6) {
                Some(v4) => of_v4(v4),
                None => of_v6(v6),
            },
        }
    }

    /// How a refusal names the class.
    fn described(self) -> &'static str {
        match self {
            Class::Public => "a public address",
            Class::Private => "a private network address",
            Class::Loopback => "a loopback address",
            Class::Blocked => "a link-local or cloud metadata address",
        }
    }
}

fn of_v4(ip: Ipv4Addr) -> Class {
    let [a, b, c, d] = ip.octets();
    if ip.is_loopback() {
        Class::Loopback
    } else if ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || a == 0
        || a >= 240
        || (a == 198 && (b == 18 || b == 19))
        // Alibaba Cloud's instance metadata, inside the shared address space.
        || [a, b, c, d] == [100, 100, 100, 200]
    {
        Class::Blocked
    } else if ip.is_private() || (a == 100 && (64..=127).contains(&b)) {
        Class::Private
    } else {
        Class::Public
    }
}

fn of_v6(ip: Ipv6Addr) -> Class {
    let s = ip.segments();
    if ip.is_loopback() {
        Class::Loopback
    } else if ip.is_unspecified()
        || ip.is_multicast()
        // Link-local fe80::/10 and the deprecated site-local fec0::/10.
        || (s[0] & 0xffc0) == 0xfe80
        || (s[0] & 0xffc0) == 0xfec0
        // Teredo, and NAT64 for local use, whose embedded address cannot be classed.
        || s[..2] == [0x2001, 0]
        || s[..3] == [0x64, 0xff9b, 1]
        // AWS's IPv6 instance metadata, inside the unique-local range.
        || ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)
    {
        Class::Blocked
    } else if (s[0] & 0xfe00) == 0xfc00 {
        Class::Private
    } else {
        Class::Public
    }
}

/// The IPv4 address inside IPv4-mapped, IPv4-compatible, NAT64 (`64:ff9b::/96`) and 6to4
/// (`2002::/16`) addresses.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::from((u32::from(s[6]) << 16) | u32::from(s[7]));
    match s[..6] {
        [0, 0, 0, 0, 0, 0xffff] | [0x64, 0xff9b, 0, 0, 0, 0] => Some(low),
        [0, 0, 0, 0, 0, 0] if !ip.is_loopback() && !ip.is_unspecified() => Some(low),
        [0x2002, ..] => Some(Ipv4Addr::from((u32::from(s[1]) << 16) | u32::from(s[2]))),
        _ => None,
    }
}

/// Names that are classed without asking DNS.
fn class_of_name(name: &str) -> Option<Class> {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    if name == "localhost" || name.ends_with(".localhost") {
        Some(Class::Loopback)
    } else if matches!(
        name.as_str(),
        "metadata" | "metadata.google.internal" | "instance-data" | "instance-data.ec2.internal"
    ) {
        Some(Class::Blocked)
    } else {
        None
    }
}

/// The class of a URL's host when it can be told without DNS: an IP literal or a known name.
fn class_of_host(url: &Url) -> Option<Class> {
    match url.host()? {
        Host::Ipv4(ip) => Some(Class::of(IpAddr::V4(ip))),
        Host::Ipv6(ip) => Some(Class::of(IpAddr::V6(ip))),
        Host::Domain(name) => class_of_name(name),
    }
}

/// A request the policy refuses: the URL and the class of where it would go.
#[derive(Clone, Debug, PartialEq)]
pub struct Refused {
    pub url: String,
    pub class: Class,
    /// The class of the MCP server the policy was made for.
    pub base: Class,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.class == Class::Blocked {
            write!(f, "{}, {}", self.url, self.class.described())
        } else {
            write!(
                f,
                "{}, {}, while the MCP server is on {}",
                self.url,
                self.class.described(),
                self.base.described()
            )
        }
    }
}

/// The addresses OAuth requests for one MCP server may reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reach {
    base: Class,
}

impl Reach {
    /// The reach of the MCP server at `resource`: the class of its IP literal or known name,
    /// else of the addresses its name resolves to now (all of them loopback, or all private,
    /// makes it that class; anything else public). A server URL that is itself blocked can reach
    /// nothing but public addresses, and [`Reach::check`] refuses the URL itself.
    pub async fn of(resource: &Url) -> Reach {
        if let Some(class) = class_of_host(resource) {
            return Reach { base: class };
        }
        let (Some(host), Some(port)) = (resource.host_str(), resource.port_or_known_default())
        else {
            return Reach {
                base: Class::Public,
            };
        };
        let classes: Vec<Class> = match tokio::net::lookup_host((host, port)).await {
            Ok(addrs) => addrs.map(|a| Class::of(a.ip())).collect(),
            Err(_) => Vec::new(),
        };
        let base = match classes.first() {
            Some(&first) if classes.iter().all(|&c| c == first) => first,
            _ => Class::Public,
        };
        Reach { base }
    }

    /// The reach of a server of class `base` (tests, and callers that know it).
    pub fn from_class(base: Class) -> Reach {
        Reach { base }
    }

    /// Whether requests may go to an address of class `class`.
    pub fn allows(self, class: Class) -> bool {
        match class {
            Class::Public => true,
            Class::Private | Class::Loopback => class == self.base,
            Class::Blocked => false,
        }
    }

    /// Checks `url` before a request is sent: its scheme, and its host when that is an IP
    /// literal or a known name. Other names are checked as they are resolved.
    pub fn check(self, url: &str) -> Result<Url, Refused> {
        let refused = |class| Refused {
            url: url.to_string(),
            class,
            base: self.base,
        };
        let parsed = Url::parse(url).map_err(|_| refused(Class::Blocked))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
            return Err(refused(Class::Blocked));
        }
        match class_of_host(&parsed) {
            Some(class) if !self.allows(class) => Err(refused(class)),
            _ => Ok(parsed),
        }
    }

    /// The HTTP client for requests under this reach: names resolve only to allowed addresses,
    /// at most `redirects` redirects are followed and each is checked, bounded in time.
    pub fn client(self, redirects: usize) -> reqwest::Client {
        static CLIENTS: OnceLock<std::sync::Mutex<Vec<(Reach, usize, reqwest::Client)>>> =
            OnceLock::new();
        let mut clients = CLIENTS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some((_, _, client)) = clients
            .iter()
            .find(|(r, n, _)| *r == self && *n == redirects)
        {
            return client.clone();
        }
        let policy = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() > redirects {
                // Without redirects the answer is returned as it is, as reqwest's `none` does.
                return if redirects == 0 {
                    attempt.stop()
                } else {
                    attempt.error("too many redirects")
                };
            }
            match self.check(attempt.url().as_str()) {
                Ok(_) => attempt.follow(),
                Err(refused) => {
                    let why = refused.to_string();
                    attempt.error(why)
                }
            }
        });
        let client = reqwest::Client::builder()
            .redirect(policy)
            .dns_resolver(Arc::new(Filter {
                reach: self,
                proxies: proxy_hosts(),
            }))
            .timeout(Duration::from_secs(30))
            .user_agent(concat!("katari/", env!("CARGO_PKG_VERSION")))
            .build()
            .unwrap_or_else(|_| reqwest::Client::new());
        clients.push((self, redirects, client.clone()));
        client
    }
}

/// The hosts of the proxies set in the environment: reqwest resolves only the proxy's name when
/// it uses one, and the proxy resolves the target, so a proxy on the private network is allowed.
fn proxy_hosts() -> Vec<String> {
    [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ]
    .iter()
    .filter_map(|var| std::env::var(var).ok())
    .filter_map(|proxy| {
        let proxy = if proxy.contains("://") {
            proxy
        } else {
            format!("http://{proxy}")
        };
        Some(Url::parse(&proxy).ok()?.host_str()?.to_ascii_lowercase())
    })
    .collect()
}

/// A resolver that keeps only the addresses the reach allows.
struct Filter {
    reach: Reach,
    proxies: Vec<String>,
}

impl reqwest::dns::Resolve for Filter {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let reach = self.reach;
        let host = name.as_str().to_ascii_lowercase();
        let proxy = self.proxies.contains(&host);
        Box::pin(async move {
            if let Some(class) = class_of_name(&host)
                && !proxy
                && !reach.allows(class)
            {
                return Err(refusal(&host, class, reach).into());
            }
            let resolved: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if proxy {
                return Ok(Box::new(resolved.into_iter()) as reqwest::dns::Addrs);
            }
            let first = resolved.first().map(|a| Class::of(a.ip()));
            let allowed: Vec<SocketAddr> = resolved
                .into_iter()
                .filter(|a| reach.allows(Class::of(a.ip())))
                .collect();
            match (allowed.is_empty(), first) {
                (true, Some(class)) => Err(refusal(&host, class, reach).into()),
                _ => Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs),
            }
        })
    }
}

fn refusal(host: &str, class: Class, reach: Reach) -> String {
    Refused {
        url: host.to_string(),
        class,
        base: reach.base,
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(text: &str) -> Class {
        Class::of(text.parse().expect("an address"))
    }

    #[test]
    fn addresses_are_classed() {
        for blocked in [
            "169.254.169.254",
            "169.254.0.1",
            "fe80::1",
            "fd00:ec2::254",
            "100.100.100.200",
            "0.0.0.0",
            "::",
            "255.255.255.255",
            "224.0.0.1",
            "ff02::1",
            "240.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "2002:a9fe:a9fe::",
            "2001::1",
        ] {
            assert_eq!(class(blocked), Class::Blocked, "{blocked}");
        }
        for private in [
            "10.0.0.1",
            "172.16.0.1",
            "192.168.1.1",
            "100.64.0.1",
            "fd12::1",
            "::ffff:10.1.2.3",
        ] {
            assert_eq!(class(private), Class::Private, "{private}");
        }
        for loopback in ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"] {
            assert_eq!(class(loopback), Class::Loopback, "{loopback}");
        }
        for public in ["93.184.216.34", "8.8.8.8", "2606:4700::1111"] {
            assert_eq!(class(public), Class::Public, "{public}");
        }
    }

    #[test]
    fn a_reach_allows_public_addresses_and_only_its_own_local_class() {
        let public = Reach::from_class(Class::Public);
        let loopback = Reach::from_class(Class::Loopback);
        let private = Reach::from_class(Class::Private);
        assert!(public.check("https://auth.example.org/token").is_ok());
        assert!(public.check("http://8.8.8.8/token").is_ok());
        for url in [
            "http://10.0.0.1/token",
            "http://127.0.0.1:9/token",
            "http://localhost/token",
            "http://169.254.169.254/latest/meta-data",
            "http://metadata.google.internal/",
            "http://[fe80::1]/token",
        ] {
            assert!(public.check(url).is_err(), "{url}");
        }
        assert!(loopback.check("http://127.0.0.1:9/token").is_ok());
        assert!(loopback.check("http://localhost:9/token").is_ok());
        assert!(loopback.check("https://auth.example.org/token").is_ok());
        assert!(loopback.check("http://10.0.0.1/token").is_err());
        assert!(loopback.check("http://169.254.169.254/").is_err());
        assert!(private.check("http://192.168.0.2/token").is_ok());
        assert!(private.check("http://127.0.0.1/token").is_err());
        assert!(private.check("file:///etc/passwd").is_err());
        assert_eq!(
            loopback
                .check("http://10.0.0.1/token")
                .map_err(|r| r.to_string()),
            Err(
                "http://10.0.0.1/token, a private network address, while the MCP server is on a loopback address"
                    .to_string()
            )
        );
        assert_eq!(
            loopback
                .check("http://169.254.169.254/token")
                .map_err(|r| r.to_string()),
            Err("http://169.254.169.254/token, a link-local or cloud metadata address".to_string())
        );
    }

    #[test]
    fn the_reach_of_a_server_is_the_class_of_its_host() {
        let run = |url: &str| {
            let url = Url::parse(url).expect("url");
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime")
                .block_on(Reach::of(&url))
        };
        assert_eq!(
            run("http://127.0.0.1:1/mcp"),
            Reach::from_class(Class::Loopback)
        );
        assert_eq!(
            run("http://localhost:1/mcp"),
            Reach::from_class(Class::Loopback)
        );
        assert_eq!(
            run("https://10.1.1.1/mcp"),
            Reach::from_class(Class::Private)
        );
    }
}
