// kubelet_standin.cc — a kubelet stand-in for the device plugin's tests: no kubelet runs on these
// machines (Debian ships none), so this speaks kubelet's side of the device plugin API v1beta1
// over the same deviceplugin.proto, as kubelet does:
//
//   serve --dir D --state S   starts like kubelet's device manager: removes the sockets in D
//                             (kubelet.sock too), serves Registration on D/kubelet.sock; for each
//                             Register it checks the request, dials the plugin's endpoint back,
//                             calls GetDevicePluginOptions and keeps ListAndWatch open (a new
//                             registration of a resource replaces the old stream). What it sees
//                             goes to files in S, written whole by rename, for tests to wait on:
//                               registrations          one line per Register: RESOURCE ENDPOINT
//                               <res>.options          pre_start_required=B preferred=B
//                               <res>.list             the last list: one "ID HEALTH" per line
//                               <res>.updates          how many lists arrived on this stream
//                             (<res>: the resource name with '/' as '_'). Runs until SIGTERM.
//   prefer --socket P --available IDS [--must IDS] --size N
//                             GetPreferredAllocation for one container; prints the chosen IDs.
//   allocate --socket P IDS [IDS ...]
//                             Allocate, one container per IDS; prints "C NAME=VALUE" lines.
//   bench-allocate --socket P --ids IDS --count N
//                             N Allocate calls back to back on one connection; prints p50, p99
//                             and max in ms (no --ids: GetDevicePluginOptions, a control).
// IDS are comma-separated. A gRPC error prints "error CODE: message" on stderr, exit 1.
#include <grpcpp/grpcpp.h>
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "deviceplugin.grpc.pb.h"

namespace {

std::string dir, state;

std::vector<std::string> split(const std::string &s)
{
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ','))
        if (!item.empty())
            out.push_back(item);
    return out;
}

void write_file(const std::string &name, const std::string &text)
{
    std::string tmp = state + "/." + name + ".tmp";
    {
        std::ofstream f(tmp, std::ios::trunc);
        f << text;
    }
    rename(tmp.c_str(), (state + "/" + name).c_str());
}

std::string file_key(std::string resource)
{
    std::replace(resource.begin(), resource.end(), '/', '_');
    return resource;
}

std::unique_ptr<v1beta1::DevicePlugin::Stub> dial(const std::string &socket)
{
    return v1beta1::DevicePlugin::NewStub(
        grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
}

int fail(const grpc::Status &st)
{
    std::fprintf(stderr, "error %d: %s\n", static_cast<int>(st.error_code()),
                 st.error_message().c_str());
    return 1;
}

// One registered resource: its stream to the plugin, replaced by a later registration.
struct Watch {
    std::shared_ptr<grpc::ClientContext> ctx;
    std::thread thread;
};
std::mutex watches_lock;
std::map<std::string, Watch> watches;
std::string registrations;

void watch(std::string resource, std::string endpoint, std::shared_ptr<grpc::ClientContext> ctx)
{
    auto stub = dial(dir + "/" + endpoint);
    std::string key = file_key(resource);
    {
        grpc::ClientContext octx;
        octx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        octx.set_wait_for_ready(true);
        v1beta1::Empty none;
        v1beta1::DevicePluginOptions opts;
        grpc::Status st = stub->GetDevicePluginOptions(&octx, none, &opts);
        write_file(key + ".options",
                   st.ok() ? "pre_start_required=" + std::to_string(opts.pre_start_required()) +
                                 " preferred=" +
                                 std::to_string(opts.get_preferred_allocation_available()) + "\n"
                           : "error " + st.error_message() + "\n");
    }
    v1beta1::Empty none;
    auto reader = stub->ListAndWatch(ctx.get(), none);
    v1beta1::ListAndWatchResponse list;
    unsigned updates = 0;
    while (reader->Read(&list)) {
        std::string text;
        for (const auto &d : list.devices())
            text += d.id() + " " + d.health() + "\n";
        write_file(key + ".list", text);
        write_file(key + ".updates", std::to_string(++updates) + "\n");
    }
    reader->Finish();
}

class Registration final : public v1beta1::Registration::Service {
    grpc::Status Register(grpc::ServerContext *, const v1beta1::RegisterRequest *req,
                          v1beta1::Empty *) override
    {
        if (req->version() != "v1beta1")
            return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                "unsupported device plugin API version " + req->version());
        if (req->resource_name().find('/') == std::string::npos ||
            req->endpoint().empty() || req->endpoint().find('/') != std::string::npos)
            return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "bad resource or endpoint");
        std::lock_guard<std::mutex> hold(watches_lock);
        registrations += req->resource_name() + " " + req->endpoint() + "\n";
        write_file("registrations", registrations);
        auto old = watches.find(req->resource_name());
        if (old != watches.end()) { // kubelet replaces the endpoint of a resource registered again
            old->second.ctx->TryCancel();
            old->second.thread.join();
            watches.erase(old);
        }
        auto ctx = std::make_shared<grpc::ClientContext>();
        Watch &w = watches[req->resource_name()];
        w.ctx = ctx;
        w.thread = std::thread(watch, req->resource_name(), req->endpoint(), ctx);
        return grpc::Status::OK;
    }
};

// kubelet's device manager removes the sockets in its directory when it starts.
void remove_sockets()
{
    DIR *d = opendir(dir.c_str());
    if (!d)
        return;
    while (struct dirent *e = readdir(d)) {
        std::string path = dir + "/" + e->d_name;
        struct stat st;
        if (lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode))
            unlink(path.c_str());
    }
    closedir(d);
}

int serve()
{
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
    remove_sockets();
    Registration service;
    grpc::ServerBuilder b;
    b.AddListeningPort("unix:" + dir + "/kubelet.sock", grpc::InsecureServerCredentials());
    b.RegisterService(&service);
    std::unique_ptr<grpc::Server> server = b.BuildAndStart();
    if (!server) {
        std::fprintf(stderr, "kubelet-standin: cannot serve %s/kubelet.sock\n", dir.c_str());
        return 1;
    }
    write_file("ready", "1\n");
    int sig = 0;
    sigwait(&sigs, &sig);
    {
        std::lock_guard<std::mutex> hold(watches_lock);
        for (auto &w : watches)
            w.second.ctx->TryCancel();
        for (auto &w : watches)
            w.second.thread.join();
    }
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    unlink((dir + "/kubelet.sock").c_str());
    return 0;
}

int prefer(const std::string &socket, const std::string &avail, const std::string &must, int size)
{
    v1beta1::PreferredAllocationRequest req;
    auto *c = req.add_container_requests();
    for (const auto &id : split(avail))
        c->add_available_deviceids(id);
    for (const auto &id : split(must))
        c->add_must_include_deviceids(id);
    c->set_allocation_size(size);
    v1beta1::PreferredAllocationResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    grpc::Status st = dial(socket)->GetPreferredAllocation(&ctx, req, &resp);
    if (!st.ok())
        return fail(st);
    if (resp.container_responses_size() != 1) {
        std::fprintf(stderr, "error: %d container responses for 1 request\n",
                     resp.container_responses_size());
        return 1;
    }
    std::string out;
    for (const auto &id : resp.container_responses(0).deviceids())
        out += (out.empty() ? "" : ",") + id;
    std::printf("%s\n", out.c_str());
    return 0;
}

int allocate(const std::string &socket, const std::vector<std::string> &containers)
{
    v1beta1::AllocateRequest req;
    for (const auto &ids : containers) {
        auto *c = req.add_container_requests();
        for (const auto &id : split(ids))
            c->add_devices_ids(id);
    }
    v1beta1::AllocateResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    grpc::Status st = dial(socket)->Allocate(&ctx, req, &resp);
    if (!st.ok())
        return fail(st);
    for (int i = 0; i < resp.container_responses_size(); i++) {
        std::map<std::string, std::string> envs(resp.container_responses(i).envs().begin(),
                                                resp.container_responses(i).envs().end());
        for (const auto &e : envs)
            std::printf("%d %s=%s\n", i, e.first.c_str(), e.second.c_str());
    }
    return 0;
}

// ids empty: GetDevicePluginOptions instead, the same round trip with no work in the plugin (a
// control for what the machine itself adds).
int bench_allocate(const std::string &socket, const std::string &ids, int count)
{
    auto stub = dial(socket);
    v1beta1::AllocateRequest req;
    auto *c = req.add_container_requests();
    for (const auto &id : split(ids))
        c->add_devices_ids(id);
    std::vector<double> ms;
    for (int i = 0; i < count; i++) {
        v1beta1::AllocateResponse resp;
        v1beta1::DevicePluginOptions opts;
        v1beta1::Empty none;
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        auto t0 = std::chrono::steady_clock::now();
        grpc::Status st = ids.empty() ? stub->GetDevicePluginOptions(&ctx, none, &opts)
                                      : stub->Allocate(&ctx, req, &resp);
        auto t1 = std::chrono::steady_clock::now();
        if (!st.ok())
            return fail(st);
        ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    auto at = [&](double q) { return ms[std::min(ms.size() - 1, (size_t)(q * ms.size()))]; };
    std::printf("count=%d p50_ms=%.3f p99_ms=%.3f max_ms=%.3f\n", count, at(0.50), at(0.99),
                ms.back());
    return 0;
}

int usage()
{
    std::fprintf(stderr, "usage: kubelet-standin serve --dir D --state S | prefer --socket P "
                         "--available IDS [--must IDS] --size N | allocate --socket P IDS... | "
                         "bench-allocate --socket P --ids IDS --count N\n");
    return 2;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage();
    std::string cmd = argv[1], socket, avail, must, ids;
    int size = 0, count = 100;
    std::vector<std::string> rest;
    for (int i = 2; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
        if (a == "--dir") dir = value();
        else if (a == "--state") state = value();
        else if (a == "--socket") socket = value();
        else if (a == "--available") avail = value();
        else if (a == "--must") must = value();
        else if (a == "--ids") ids = value();
        else if (a == "--size") size = std::atoi(value().c_str());
        else if (a == "--count") count = std::atoi(value().c_str());
        else rest.push_back(a);
    }
    if (cmd == "serve" && !dir.empty() && !state.empty())
        return serve();
    if (cmd == "prefer" && !socket.empty())
        return prefer(socket, avail, must, size);
    if (cmd == "allocate" && !socket.empty() && !rest.empty())
        return allocate(socket, rest);
    if (cmd == "bench-allocate" && !socket.empty() && count > 0)
        return bench_allocate(socket, ids, count);
    return usage();
}
