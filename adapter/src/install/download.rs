//! Fetching over HTTP: HTTPS only (plain HTTP only to loopback, and only when the caller
//! opted in), the standard proxy variables honoured for remote hosts and never for
//! loopback. The archive streams to a `.part` file in the cache under a hard size cap,
//! hashed in the same pass; 404, other statuses, a broken connection, a truncated body
//! and a stalled transfer each fail with their own error, and transient ones are retried
//! a bounded number of times with a doubling backoff. Before the body is read, the cache's
//! disk must have room for the archive and its unpacked files (`space`).

use std::net::IpAddr;
use std::path::Path;

use reqwest::Url;
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

use super::error::InstallError;
use super::options::{InstallEvent, InstallOptions, InstallStep};
use super::space;

/// The largest agent index document read.
const MAX_INDEX_BYTES: u64 = 4 * 1024 * 1024;
/// How often (in bytes) download progress is reported.
const PROGRESS_STEP: u64 = 4 * 1024 * 1024;

/// A finished archive download.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Downloaded {
    /// The body's SHA-256, hex.
    pub(crate) sha256: String,
    /// Its size.
    pub(crate) bytes: u64,
}

/// Parses `url` and refuses anything but HTTPS, or plain HTTP to loopback when allowed.
pub(crate) fn checked_url(url: &str, insecure_loopback: bool) -> Result<Url, InstallError> {
    let shown: String = url.chars().take(200).collect();
    let parsed = Url::parse(url).map_err(|_| InstallError::InsecureUrl(shown.clone()))?;
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if insecure_loopback && is_loopback(&parsed) => Ok(parsed),
        _ => Err(InstallError::InsecureUrl(shown)),
    }
}

fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// How many redirects a download follows.
const MAX_REDIRECTS: usize = 10;

/// A client for `url`: no proxy for loopback, the environment's proxies otherwise. Every
/// redirect hop must pass the same URL check as the first URL (HTTPS, or opted-in loopback
/// HTTP); a hop that does not is not followed, and the download fails with `insecure_url`.
fn client_for(url: &Url, insecure_loopback: bool) -> Result<reqwest::Client, InstallError> {
    let policy = reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() >= MAX_REDIRECTS {
            attempt.error("too many redirects")
        } else if checked_url(attempt.url().as_str(), insecure_loopback).is_ok() {
            attempt.follow()
        } else {
            attempt.stop()
        }
    });
    let mut builder = reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(30))
        .redirect(policy)
        .https_only(!is_loopback(url));
    if is_loopback(url) {
        builder = builder.no_proxy();
    }
    builder
        .build()
        .map_err(|e| InstallError::Network(format!("cannot build an HTTP client ({e})")))
}

/// Fetches an agent index document (at most 4 MiB).
pub(crate) async fn fetch_agent_index(
    url: &str,
    options: &InstallOptions,
) -> Result<String, InstallError> {
    let url = checked_url(url, options.insecure_loopback)?;
    let client = client_for(&url, options.insecure_loopback)?;
    let unavailable = |what: String| InstallError::AgentIndexUnavailable(what);
    let mut response = client
        .get(url)
        .send()
        .await
        .map_err(|e| unavailable(kind_of(&e)))?;
    if !response.status().is_success() {
        return Err(unavailable(format!("HTTP {}", response.status().as_u16())));
    }
    let mut body = Vec::new();
    while let Some(chunk) = tokio::time::timeout(options.stall_timeout, response.chunk())
        .await
        .map_err(|_| unavailable("the transfer stalled".to_owned()))?
        .map_err(|e| unavailable(kind_of(&e)))?
    {
        body.extend_from_slice(&chunk);
        if body.len() as u64 > MAX_INDEX_BYTES {
            return Err(unavailable("the document is larger than 4 MiB".to_owned()));
        }
    }
    String::from_utf8(body).map_err(|_| InstallError::AgentIndexMalformed("not UTF-8".to_owned()))
}

/// Downloads the archive at `url` into `part`, retrying transient failures.
pub(crate) async fn download_archive(
    url: &str,
    part: &Path,
    options: &InstallOptions,
) -> Result<Downloaded, InstallError> {
    let url = checked_url(url, options.insecure_loopback)?;
    let client = client_for(&url, options.insecure_loopback)?;
    let mut attempt = 1u32;
    let mut backoff = options.retry_backoff;
    loop {
        match download_once(&client, &url, part, options).await {
            Ok(done) => return Ok(done),
            Err(error) if error.is_transient() && attempt <= options.retries => {
                attempt += 1;
                options.report(InstallEvent::Retrying {
                    attempt,
                    reason: error.reason().into(),
                });
                tokio::time::sleep(backoff).await;
                backoff = backoff.saturating_mul(2);
            }
            Err(error) => return Err(error),
        }
    }
}

async fn download_once(
    client: &reqwest::Client,
    url: &Url,
    part: &Path,
    options: &InstallOptions,
) -> Result<Downloaded, InstallError> {
    let cap = options.limits.max_archive_bytes;
    let mut response = client
        .get(url.clone())
        .send()
        .await
        .map_err(|e| InstallError::Network(kind_of(&e)))?;
    let status = response.status();
    if status.is_redirection() {
        // The redirect policy stopped at a hop the URL check refuses.
        return Err(InstallError::InsecureUrl(
            "a redirect to a URL that is neither HTTPS nor opted-in loopback".to_owned(),
        ));
    }
    if status == reqwest::StatusCode::NOT_FOUND {
        return Err(InstallError::NotFound);
    }
    if !status.is_success() {
        return Err(InstallError::HttpStatus(status.as_u16()));
    }
    let total = response.content_length();
    if total.is_some_and(|t| t > cap) {
        return Err(InstallError::TooLarge { cap });
    }
    // Before a byte is written: the archive and its unpacked files must fit on the disk.
    let cache = part.parent().unwrap_or(part);
    space::check_free_space(cache, total, options.free_space.as_ref())?;
    options.report(InstallEvent::DownloadStarted {
        url: url.to_string(),
        total,
    });
    let mut file = tokio::fs::File::create(part)
        .await
        .map_err(|e| InstallError::io("create", part, &e))?;
    options.report(InstallEvent::Step(InstallStep::Download));
    let mut hasher = Sha256::new();
    let mut bytes = 0u64;
    let mut reported = 0u64;
    loop {
        let chunk = tokio::time::timeout(options.stall_timeout, response.chunk())
            .await
            .map_err(|_| InstallError::Stalled(options.stall_timeout))?;
        let chunk = match chunk {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(error) => {
                // The body broke off after the response began.
                return Err(match total {
                    Some(expected) if bytes < expected => InstallError::Truncated {
                        received: bytes,
                        expected,
                    },
                    _ => InstallError::Network(kind_of(&error)),
                });
            }
        };
        bytes += chunk.len() as u64;
        if bytes > cap {
            return Err(InstallError::TooLarge { cap });
        }
        hasher.update(&chunk);
        file.write_all(&chunk)
            .await
            .map_err(|e| InstallError::io("write", part, &e))?;
        if bytes - reported >= PROGRESS_STEP {
            reported = bytes;
            options.report(InstallEvent::Downloaded { bytes, total });
        }
    }
    if let Some(expected) = total
        && bytes != expected
    {
        return Err(InstallError::Truncated {
            received: bytes,
            expected,
        });
    }
    file.flush()
        .await
        .map_err(|e| InstallError::io("write", part, &e))?;
    file.sync_all()
        .await
        .map_err(|e| InstallError::io("sync", part, &e))?;
    options.report(InstallEvent::Downloaded { bytes, total });
    Ok(Downloaded {
        sha256: hex::encode(hasher.finalize()),
        bytes,
    })
}

/// What kind of failure a reqwest error is, without its text (which can hold URLs).
fn kind_of(error: &reqwest::Error) -> String {
    let kind = if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "cannot connect"
    } else if error.is_body() || error.is_decode() {
        "the body broke off"
    } else if error.is_redirect() {
        "too many redirects"
    } else {
        "the request failed"
    };
    kind.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_opted_in_loopback_http_is_allowed() {
        assert!(checked_url("https://dl.google.com/x.zip", false).is_ok());
        assert!(checked_url("http://dl.google.com/x.zip", false).is_err());
        assert!(checked_url("http://dl.google.com/x.zip", true).is_err());
        assert!(checked_url("http://127.0.0.1:8080/x.zip", false).is_err());
        assert!(checked_url("http://127.0.0.1:8080/x.zip", true).is_ok());
        assert!(checked_url("http://127.4.5.6/x.zip", true).is_ok());
        assert!(checked_url("http://[::1]:9/x.zip", true).is_ok());
        assert!(checked_url("http://localhost:9/x.zip", true).is_ok());
        assert!(checked_url("http://10.0.0.1/x.zip", true).is_err());
        assert!(checked_url("ftp://127.0.0.1/x.zip", true).is_err());
        assert!(checked_url("file:///etc/passwd", true).is_err());
        assert!(checked_url("not a url", true).is_err());
    }
}
