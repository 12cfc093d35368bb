// dra_kubelet_standin.cc — kubelet's side of DRA for convgpu-dra-driver's tests: no kubelet runs
// on these machines (Debian ships none), so this speaks what kubelet's plugin watcher and DRA
// manager speak, over the same .proto files (src/integrations/k8s/dra):
//
//   register --registry DIR      as the plugin watcher does for a socket that appears in DIR:
//                                GetInfo on DIR/gpu.convgpu.io-reg.sock, checks the type
//                                (DRAPlugin) and the endpoint, picks the newest version it
//                                speaks (v1.DRAPlugin, else v1beta1.DRAPlugin), reports
//                                NotifyRegistrationStatus(true); prints name=, endpoint=, version=
//   prepare --socket P [--version v1|v1beta1] NS/NAME/UID...
//                                NodePrepareResources with those claims (one call, as kubelet
//                                does for a pod); per claim prints
//                                "UID request=R pool=P device=D cdi=ID" or "UID error: MSG"
//   unprepare --socket P [--version v1|v1beta1] NS/NAME/UID...
//                                NodeUnprepareResources; "UID ok" or "UID error: MSG"
//   bench --socket P --claim NS/NAME/UID --count N [--again]
//                                N rounds of prepare (timed) and unprepare of the claim, each
//                                prepare a fresh one; prints p50, p99 and max of the prepares in ms.
//                                --again: the claim prepared once, then N prepares of the prepared
//                                claim (kubelet's repeated call: a control with little work)
// A claim's error exits 1; a gRPC failure prints "error CODE: message", exit 2.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "dra_v1.grpc.pb.h"
#include "dra_v1beta1.grpc.pb.h"
#include "pluginregistration.grpc.pb.h"

namespace {

namespace v1 = k8s::io::kubelet::pkg::apis::dra::v1;
namespace v1beta1 = k8s::io::kubelet::pkg::apis::dra::v1beta1;

std::shared_ptr<grpc::Channel> dial(const std::string &path)
{
    return grpc::CreateChannel("unix:" + path, grpc::InsecureChannelCredentials());
}

void deadline(grpc::ClientContext &ctx, int s = 30)
{
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(s));
}

int grpc_error(const grpc::Status &st)
{
    std::fprintf(stderr, "error %d: %s\n", static_cast<int>(st.error_code()),
                 st.error_message().c_str());
    return 2;
}

int do_register(const std::string &dir)
{
    auto stub = pluginregistration::Registration::NewStub(dial(dir + "/gpu.convgpu.io-reg.sock"));
    pluginregistration::PluginInfo info;
    {
        grpc::ClientContext ctx;
        deadline(ctx);
        ctx.set_wait_for_ready(true);
        grpc::Status st = stub->GetInfo(&ctx, pluginregistration::InfoRequest(), &info);
        if (!st.ok())
            return grpc_error(st);
    }
    std::string version, why;
    for (const char *want : {"v1.DRAPlugin", "v1beta1.DRAPlugin"})
        for (const auto &v : info.supported_versions())
            if (version.empty() && v == want)
                version = want;
    if (info.type() != "DRAPlugin")
        why = "plugin type " + info.type() + " is not DRAPlugin";
    else if (version.empty())
        why = "no supported version in common";
    else if (info.endpoint().empty() || info.endpoint()[0] != '/')
        why = "the endpoint is not an absolute path";
    pluginregistration::RegistrationStatus rs;
    rs.set_plugin_registered(why.empty());
    rs.set_error(why);
    pluginregistration::RegistrationStatusResponse none;
    grpc::ClientContext ctx;
    deadline(ctx);
    grpc::Status st = stub->NotifyRegistrationStatus(&ctx, rs, &none);
    if (!st.ok())
        return grpc_error(st);
    std::printf("name=%s\nendpoint=%s\nversion=%s\n", info.name().c_str(),
                info.endpoint().c_str(), version.c_str());
    for (const auto &v : info.supported_versions())
        std::printf("supported=%s\n", v.c_str());
    if (!why.empty()) {
        std::fprintf(stderr, "refused: %s\n", why.c_str());
        return 1;
    }
    return 0;
}

struct ClaimRef {
    std::string ns, name, uid;
};

bool parse_claim(const char *s, ClaimRef &out)
{
    std::string t(s);
    size_t a = t.find('/'), b = a == std::string::npos ? a : t.find('/', a + 1);
    if (b == std::string::npos)
        return false;
    out = {t.substr(0, a), t.substr(a + 1, b - a - 1), t.substr(b + 1)};
    return true;
}

template <class Api> struct Calls;
template <> struct Calls<v1::DRAPlugin> {
    using PrepReq = v1::NodePrepareResourcesRequest;
    using PrepResp = v1::NodePrepareResourcesResponse;
    using UnReq = v1::NodeUnprepareResourcesRequest;
    using UnResp = v1::NodeUnprepareResourcesResponse;
};
template <> struct Calls<v1beta1::DRAPlugin> {
    using PrepReq = v1beta1::NodePrepareResourcesRequest;
    using PrepResp = v1beta1::NodePrepareResourcesResponse;
    using UnReq = v1beta1::NodeUnprepareResourcesRequest;
    using UnResp = v1beta1::NodeUnprepareResourcesResponse;
};

template <class Api>
int prepare(typename Api::Stub &stub, const std::vector<ClaimRef> &claims, bool quiet)
{
    typename Calls<Api>::PrepReq req;
    for (const auto &c : claims) {
        auto *x = req.add_claims();
        x->set_namespace_(c.ns);
        x->set_name(c.name);
        x->set_uid(c.uid);
    }
    typename Calls<Api>::PrepResp resp;
    grpc::ClientContext ctx;
    deadline(ctx);
    grpc::Status st = stub.NodePrepareResources(&ctx, req, &resp);
    if (!st.ok())
        return grpc_error(st);
    int rc = 0;
    for (const auto &c : claims) {
        auto it = resp.claims().find(c.uid);
        if (it == resp.claims().end()) {
            std::printf("%s error: no answer for this claim\n", c.uid.c_str());
            rc = 1;
            continue;
        }
        if (!it->second.error().empty()) {
            std::printf("%s error: %s\n", c.uid.c_str(), it->second.error().c_str());
            rc = 1;
            continue;
        }
        if (quiet)
            continue;
        for (const auto &d : it->second.devices()) {
            std::string reqs, ids;
            for (const auto &r : d.request_names())
                reqs += (reqs.empty() ? "" : ",") + r;
            for (const auto &id : d.cdi_device_ids())
                ids += (ids.empty() ? "" : ",") + id;
            std::printf("%s request=%s pool=%s device=%s cdi=%s\n", c.uid.c_str(), reqs.c_str(),
                        d.pool_name().c_str(), d.device_name().c_str(), ids.c_str());
        }
    }
    return rc;
}

template <class Api>
int unprepare(typename Api::Stub &stub, const std::vector<ClaimRef> &claims, bool quiet)
{
    typename Calls<Api>::UnReq req;
    for (const auto &c : claims) {
        auto *x = req.add_claims();
        x->set_namespace_(c.ns);
        x->set_name(c.name);
        x->set_uid(c.uid);
    }
    typename Calls<Api>::UnResp resp;
    grpc::ClientContext ctx;
    deadline(ctx);
    grpc::Status st = stub.NodeUnprepareResources(&ctx, req, &resp);
    if (!st.ok())
        return grpc_error(st);
    int rc = 0;
    for (const auto &c : claims) {
        auto it = resp.claims().find(c.uid);
        bool ok = it != resp.claims().end() && it->second.error().empty();
        if (!ok || !quiet)
            std::printf("%s %s%s\n", c.uid.c_str(), ok ? "ok" : "error: ",
                        ok ? "" : it == resp.claims().end() ? "no answer" : it->second.error().c_str());
        rc |= !ok;
    }
    return rc;
}

template <class Api> int run(const std::string &cmd, const std::string &socket,
                              const std::vector<ClaimRef> &claims, int count, bool again)
{
    auto stub = Api::NewStub(dial(socket));
    if (cmd == "prepare")
        return prepare<Api>(*stub, claims, false);
    if (cmd == "unprepare")
        return unprepare<Api>(*stub, claims, false);
    std::vector<double> ms;
    if (again && prepare<Api>(*stub, claims, true) != 0)
        return 1;
    for (int i = 0; i < count; i++) {
        auto t0 = std::chrono::steady_clock::now();
        int rc = prepare<Api>(*stub, claims, true);
        auto t1 = std::chrono::steady_clock::now();
        if (rc != 0 || (!again && unprepare<Api>(*stub, claims, true) != 0))
            return 1;
        ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    if (again && unprepare<Api>(*stub, claims, true) != 0)
        return 1;
    std::sort(ms.begin(), ms.end());
    auto at = [&](double q) { return ms[std::min(ms.size() - 1, static_cast<size_t>(q * ms.size()))]; };
    std::printf("prepares=%zu p50_ms=%.3f p99_ms=%.3f max_ms=%.3f\n", ms.size(), at(0.5),
                at(0.99), ms.back());
    return 0;
}

int usage()
{
    std::fprintf(stderr, "usage: dra-kubelet-standin register --registry DIR\n"
                         "       dra-kubelet-standin prepare|unprepare --socket P [--version V] "
                         "NS/NAME/UID...\n"
                         "       dra-kubelet-standin bench --socket P --claim NS/NAME/UID "
                         "--count N [--again]\n");
    return 2;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage();
    std::string cmd = argv[1], socket, registry, version = "v1";
    std::vector<ClaimRef> claims;
    int count = 100;
    bool again = false;
    for (int i = 2; i < argc; i++) {
        std::string a = argv[i];
        bool has = i + 1 < argc;
        if (a == "--socket" && has)
            socket = argv[++i];
        else if (a == "--registry" && has)
            registry = argv[++i];
        else if (a == "--version" && has)
            version = argv[++i];
        else if (a == "--again")
            again = true;
        else if (a == "--count" && has)
            count = std::max(1, std::atoi(argv[++i]));
        else if (a == "--claim" && has) {
            ClaimRef c;
            if (!parse_claim(argv[++i], c))
                return usage();
            claims.push_back(c);
        } else {
            ClaimRef c;
            if (!parse_claim(argv[i], c))
                return usage();
            claims.push_back(c);
        }
    }
    if (cmd == "register")
        return registry.empty() ? usage() : do_register(registry);
    if ((cmd != "prepare" && cmd != "unprepare" && cmd != "bench") || socket.empty() ||
        claims.empty())
        return usage();
    if (version == "v1")
        return run<v1::DRAPlugin>(cmd, socket, claims, count, again);
    if (version == "v1beta1")
        return run<v1beta1::DRAPlugin>(cmd, socket, claims, count, again);
    return usage();
}
