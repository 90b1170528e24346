// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Tessera",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "tessera", targets: ["tessera"]),
        .library(name: "TesseraCore", targets: ["TesseraCore"]),
        .library(name: "TesseraEngine", targets: ["TesseraEngine"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.65.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
    ],
    targets: [
        // C libraries: each system-library target only describes where the library is.
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswscale-dev", "libswresample-dev", "libx264-dev"])]
        ),
        // zmq.h is in the default include path; no pkg-config: libzmq's private requirements (Kerberos)
        // bring flags SwiftPM refuses with a warning.
        .systemLibrary(name: "CZeroMQ", providers: [.apt(["libzmq3-dev"])]),
        .systemLibrary(name: "CPostgreSQL", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // libcurl (OpenSSL flavour) as the HTTP transport for object storage; Tessera signs the requests itself.
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // The one compiled shim for what Swift cannot import from the C headers (macros, variadics).
        .target(name: "CTesseraShim", dependencies: ["CFFmpeg", "CCurl"]),

        // Swift wrapper over FFmpeg: the only module that touches its raw handles.
        .target(name: "FFmpegKit", dependencies: ["CFFmpeg", "CTesseraShim", "TesseraCore"]),

        // Swift wrapper over libzmq.
        .target(name: "ZMQKit", dependencies: ["CZeroMQ"]),

        // Swift wrapper over libcurl, and the S3 client built on it (signing and configuration live in TesseraCore).
        .target(name: "S3Kit", dependencies: ["CCurl", "CTesseraShim", "TesseraCore"]),

        // Swift wrapper over libpq.
        .target(name: "PGClient", dependencies: ["CPostgreSQL"]),

        // The SQL migrations (top-level migrations/NNNN_name.sql), compiled into the program as string literals by
        // the EmbedMigrations plugin: a copied binary needs no resource bundle beside it.
        .target(name: "TesseraMigrations", path: "migrations", plugins: ["EmbedMigrations"]),
        .plugin(name: "EmbedMigrations", capability: .buildTool(), dependencies: ["tessera-embed-sql"], path: "Plugins/EmbedMigrations"),
        .executableTarget(name: "tessera-embed-sql", path: "Plugins/EmbedSQL"),

        // The job store over PostgreSQL, and the embedded server.
        .target(
            name: "TesseraStore",
            dependencies: ["PGClient", "CTesseraShim", "TesseraCore", "TesseraMigrations", .product(name: "Logging", package: "swift-log"),
                           .product(name: "Metrics", package: "swift-metrics")]
        ),

        // Pure Swift: planning, payloads, settings. No C imports.
        .target(name: "TesseraCore", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),

        // The media engine: probe, segment, encode, audio, stitch, verify.
        .target(
            name: "TesseraEngine",
            dependencies: ["TesseraCore", "FFmpegKit", "S3Kit", .product(name: "Logging", package: "swift-log")]
        ),

        // Coordinator and worker services.
        .target(
            name: "TesseraCluster",
            dependencies: [
                "TesseraCore", "TesseraEngine", "TesseraStore", "ZMQKit", "FFmpegKit", "CTesseraShim",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                // Observability: metrics, the HTTP listener for /metrics and the probes.
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),

        // Test support: the coordinator's store in memory (no PostgreSQL).
        .target(name: "TesseraTesting", dependencies: ["TesseraStore", "TesseraCore", "ZMQKit"]),

        // The thin CLI.
        .executableTarget(
            name: "tessera",
            dependencies: [
                "TesseraEngine", "TesseraCore", "TesseraStore", "TesseraCluster",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),

        .testTarget(name: "TesseraCoreTests", dependencies: ["TesseraCore"]),
        // What the engine, integration and CLI tests share: fixtures made by ffmpeg, the external tools, a cluster of
        // real processes, and `LocalTranscoder` (the engine in one process).
        .target(
            name: "TesseraTestSupport",
            dependencies: ["TesseraEngine", "TesseraCore", "TesseraStore", "FFmpegKit", "S3Kit", .product(name: "Logging", package: "swift-log"),
                           // The loopback HTTP server that feeds headless Chromium (Player/).
                           .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                           .product(name: "NIOHTTP1", package: "swift-nio")],
            path: "Tests/TesseraTestSupport",
            // The player page is read from the source tree at run time (MSEPlayer.page).
            exclude: ["Player/mse.html"]
        ),
        // The media engine: probe, segment, encode, audio, stitch, verify (in process, and through `tessera transcode`).
        .testTarget(name: "TesseraEngineTests", dependencies: ["TesseraTestSupport", "TesseraEngine", "TesseraCore", "FFmpegKit"]),
        // The cluster: coordinator and worker processes, PostgreSQL, hosts in network namespaces, faults, security.
        .testTarget(name: "TesseraIntegrationTests", dependencies: ["TesseraTestSupport", "TesseraEngine", "TesseraCore", "TesseraStore", "ZMQKit", "S3Kit"]),
        // The `tessera` commands as users run them, and the option checks without a transcode.
        .testTarget(
            name: "TesseraCLITests",
            dependencies: ["TesseraTestSupport", "tessera", "TesseraCore", "TesseraEngine", "TesseraStore", "PGClient",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // The S3 client against a real S3 server (moto) with authentication on.
        .testTarget(name: "S3KitTests", dependencies: ["S3Kit", "TesseraCore", "TesseraTestSupport", .product(name: "Crypto", package: "swift-crypto")]),
        .testTarget(name: "ZMQKitTests", dependencies: ["ZMQKit", "TesseraCore"]),
        .testTarget(name: "TesseraClusterTests", dependencies: ["TesseraCluster", "TesseraCore", "TesseraEngine", "TesseraStore", "TesseraTesting", "ZMQKit",
                                                       .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "TesseraStoreTests", dependencies: ["TesseraStore", "TesseraCore", "PGClient", "TesseraTesting"]),
    ],
    swiftLanguageModes: [.v6]
)
