import Foundation
import TesseraCore

/// The coordinators a worker serves: each `--connect` endpoint, and for a `tcp://` host name that
/// resolves to several addresses, each address (a headless service, a round-robin name).
enum CoordinatorEndpoints {
    /// An endpoint split for resolution: `tcp://HOST:PORT`; nil for other transports and literal addresses.
    static func hostAndPort(_ endpoint: String) -> (host: String, port: String)? {
        guard endpoint.hasPrefix("tcp://") else { return nil }
        let rest = endpoint.dropFirst("tcp://".count)
        guard !rest.hasPrefix("["), let colon = rest.lastIndex(of: ":") else { return nil }
        let host = String(rest[..<colon]), port = String(rest[rest.index(after: colon)...])
        guard !host.isEmpty, !port.isEmpty, port.allSatisfy(\.isNumber), host != "*" else { return nil }
        // A literal IPv4 address needs no resolution.
        var address = in_addr()
        if inet_pton(AF_INET, host, &address) == 1 { return nil }
        return (host, port)
    }

    /// The endpoint for one resolved address.
    static func endpoint(address: String, port: String) -> String {
        address.contains(":") ? "tcp://[\(address)]:\(port)" : "tcp://\(address):\(port)"
    }

    /// Every endpoint to serve, in order, without repeats. A name that resolves to one address (or not at
    /// all, for now) stays a name: libzmq resolves it again on each reconnect.
    static func expand(_ endpoints: [String]) -> [String] {
        var out: [String] = []
        for endpoint in endpoints {
            var expanded = [endpoint]
            if let (host, port) = hostAndPort(endpoint) {
                let addresses = resolve(host)
                if addresses.count > 1 { expanded = addresses.map { self.endpoint(address: $0, port: port) } }
            }
            for e in expanded where !out.contains(e) { out.append(e) }
        }
        return out
    }

    /// The addresses `host` resolves to (TCP), in the resolver's order, without repeats.
    static func resolve(_ host: String) -> [String] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var addresses: [String] = []
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let info = node {
            var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(info.pointee.ai_addr, info.pointee.ai_addrlen, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 {
                let address = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
                if !addresses.contains(address) { addresses.append(address) }
            }
            node = info.pointee.ai_next
        }
        return addresses
    }
}
