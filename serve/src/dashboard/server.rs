//! Binding the dashboard and serving it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use super::auth;
use super::live::Hub;

/// How `factory dashboard` was asked to serve.
#[derive(Debug, Clone)]
pub struct Options {
    /// Projects to show besides the registered ones (first, in this order).
    pub projects: Vec<PathBuf>,
    /// The address to bind: `None` is 127.0.0.1 (no token needed); any other host
    /// requires the printed token.
    pub host: Option<String>,
    /// The port (0: any free one).
    pub port: u16,
    /// The factory home whose registry lists the projects (`None`: the user's).
    pub home: Option<PathBuf>,
}

/// What the handlers share.
pub(crate) struct AppState {
    pub explicit: Vec<PathBuf>,
    pub home: Option<PathBuf>,
    pub token: Option<String>,
    pub hub: Hub,
}

impl AppState {
    /// The projects shown, in a stable order: the explicit ones, then the registry's.
    /// A page names a project by its index here.
    pub fn projects(&self) -> Vec<PathBuf> {
        factory_runtime::insights::project_list(&self.explicit, self.home.as_deref())
    }
}

/// A dashboard bound to its address, not yet serving.
pub struct Bound {
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
    addr: SocketAddr,
}

impl Bound {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The token a browser must present (`None` on 127.0.0.1).
    pub fn token(&self) -> Option<&str> {
        self.state.token.as_deref()
    }

    /// The URL to open: with `?token=` when one is needed.
    pub fn url(&self) -> String {
        let host = match self.addr {
            SocketAddr::V6(a) => format!("[{}]", a.ip()),
            SocketAddr::V4(a) => a.ip().to_string(),
        };
        let base = format!("http://{host}:{}/", self.addr.port());
        match self.token() {
            Some(t) => format!("{base}?token={t}"),
            None => base,
        }
    }

    /// Serves until `shutdown` completes.
    pub async fn serve(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), DashboardError> {
        let app = super::routes::router(self.state);
        axum::serve(self.listener, app)
            .with_graceful_shutdown(shutdown)
            .await
            .map_err(|source| DashboardError::Serve { source })
    }
}

/// Binds the dashboard; with a host other than 127.0.0.1 a token is made.
pub async fn bind(options: Options) -> Result<Bound, DashboardError> {
    let host = options.host.clone().unwrap_or_else(|| "127.0.0.1".into());
    let token = match host.as_str() {
        "127.0.0.1" | "localhost" | "::1" => None,
        _ => Some(auth::new_token().map_err(|source| DashboardError::Token { source })?),
    };
    let at = format!("{host}:{}", options.port);
    let listener =
        tokio::net::TcpListener::bind(&at)
            .await
            .map_err(|source| DashboardError::Bind {
                at: at.clone(),
                source,
            })?;
    let addr = listener
        .local_addr()
        .map_err(|source| DashboardError::Bind { at, source })?;
    let home = options
        .home
        .or_else(factory_runtime::project::registry::user_home);
    Ok(Bound {
        listener,
        addr,
        state: Arc::new(AppState {
            explicit: options.projects,
            home,
            token,
            hub: Hub::default(),
        }),
    })
}

/// Binds, calls `ready` (to print the URL) and serves until Ctrl-C, on a runtime of
/// its own: what `factory dashboard` runs.
pub fn run_until_ctrl_c(
    options: Options,
    ready: impl FnOnce(&Bound),
) -> Result<(), DashboardError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|source| DashboardError::Serve { source })?;
    rt.block_on(async move {
        let bound = bind(options).await?;
        ready(&bound);
        bound
            .serve(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
    })
}

/// Why the dashboard could not serve.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum DashboardError {
    #[error("cannot listen on {at}: {source}")]
    #[diagnostic(
        code(factory::dashboard::bind),
        help("another program may use the port; pick another with --port N (0: any free port)")
    )]
    Bind { at: String, source: std::io::Error },
    #[error("cannot make an access token: {source}")]
    #[diagnostic(
        code(factory::dashboard::token),
        help("the token is read from /dev/urandom; without --host no token is needed")
    )]
    Token { source: std::io::Error },
    #[error("the dashboard server stopped: {source}")]
    #[diagnostic(
        code(factory::dashboard::serve),
        help("start it again; nothing was written")
    )]
    Serve { source: std::io::Error },
}
