// The Agents tab: a small run of the multi-agent research scenario (three sessions) through
// the window — the Gantt model's rows and critical flags against the sessions' own records,
// the breakdown equal to the simulation's session summary, the baseline holding the previous
// agent run beside the current one (and kept while pinned), a run without agent sessions
// leaving a note; and the recorder keeping a bounded number of session records.
#include "gui/agents_view.h"

#include <QAbstractItemModelTester>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QHorizontalStackedBarSeries>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTest>
#include <algorithm>
#include <atomic>
#include <cmath>

#include "gui/agent_breakdown_model.h"
#include "gui/main_window.h"
#include "gui/run_recorder.h"
#include "gui/scenario_document.h"
#include "gui/session_gantt_model.h"
#include "gui/simulation_runner.h"
#include "gui_test_registry.h"

namespace servesim::gui {
namespace {

constexpr double kEps = 1e-9;

// Opens the scenario with `sessions` sessions (the document's --set) and runs it to the end.
bool run_agents(MainWindow& w, const QString& scenario, int sessions) {
  if (!w.open_template(test::scenario_path(scenario))) return false;
  w.document()->set_value("workload.agent.sessions", nlohmann::json(sessions));
  QSignalSpy finished(w.runner(), &SimulationRunner::finished);
  if (!w.run()) return false;
  return finished.wait(60000) || finished.count() == 1;
}

QHorizontalStackedBarSeries* bars_of(QChartView* view) {
  const QList<QAbstractSeries*> series = view->chart()->series();
  return series.size() == 1 ? qobject_cast<QHorizontalStackedBarSeries*>(series[0]) : nullptr;
}

QStringList categories_of(QChartView* view) {
  for (QAbstractAxis* axis : view->chart()->axes(Qt::Vertical)) {
    if (auto* c = qobject_cast<QBarCategoryAxis*>(axis)) return c->categories();
  }
  return {};
}

}  // namespace

class AgentsViewTest : public QObject {
  Q_OBJECT

 private slots:
  void gantt_rows_are_the_median_sessions_calls() {
    MainWindow w;
    QVERIFY(run_agents(w, "agent-multi-parallel.json", 3));
    QCOMPARE(w.tabs()->tabText(MainWindow::kAgentsTab), QStringLiteral("Agents"));
    QVERIFY(w.agents_view()->has_sessions());
    const std::vector<SessionRecord>& records = w.shown_result()->sessions;
    QCOMPARE(records.size(), size_t{3});

    // The median E2E of the three, computed here from the records.
    std::vector<const SessionRecord*> by_e2e;
    for (const SessionRecord& r : records) {
      QVERIFY(r.ok);
      by_e2e.push_back(&r);
    }
    std::sort(by_e2e.begin(), by_e2e.end(), [](const SessionRecord* a, const SessionRecord* b) {
      return a->e2e_s() < b->e2e_s();
    });
    SessionGanttModel* model = w.session_gantt_model();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(model->session());
    QCOMPARE(model->session()->id, by_e2e[1]->id);
    check_rows(*model);

    // Picking another session shows its calls.
    QComboBox* picker = w.agents_view()->session_picker();
    QCOMPARE(picker->count(), 3);
    const int other = picker->findData(QVariant::fromValue<qulonglong>(by_e2e[2]->id));
    QVERIFY(other >= 0);
    picker->setCurrentIndex(other);
    QCOMPARE(model->session()->id, by_e2e[2]->id);
    check_rows(*model);

    // The chart: one category per call, an offset set plus a critical and a faded set per part.
    QHorizontalStackedBarSeries* series = bars_of(w.agents_view()->gantt_chart());
    QVERIFY(series);
    QCOMPARE(series->count(), 1 + 2 * SessionGanttModel::kPartCount);
    const QStringList categories = categories_of(w.agents_view()->gantt_chart());
    QCOMPARE(categories.size(), model->rowCount());
    QCOMPARE(categories.back(), model->label(0));  // the first call at the top
  }

  void breakdown_equals_the_simulation_summary() {
    MainWindow w;
    QVERIFY(run_agents(w, "agent-multi-parallel.json", 3));
    const SessionSummary& summary = *w.shown_result()->result.sessions;
    QCOMPARE(summary.completed, uint64_t{3});
    AgentBreakdownModel* model = w.agent_breakdown_model();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model->runs().size(), size_t{1});
    QCOMPARE(model->columnCount(), 2);
    const SessionSummary& shown = model->current()->summary;
    // Every session is kept here, so the summary's means are the records' means.
    double queue_s = 0;
    double tool_s = 0;
    for (const SessionRecord& r : w.shown_result()->sessions) {
      queue_s += r.path.llm_queue_s;
      tool_s += r.path.tool_s;
    }
    QVERIFY(std::abs(AgentBreakdownModel::value(AgentBreakdownModel::kLlmQueue, shown) -
                     queue_s / 3) < kEps);
    QVERIFY(std::abs(AgentBreakdownModel::value(AgentBreakdownModel::kTools, shown) - tool_s / 3) <
            kEps);
    QCOMPARE(AgentBreakdownModel::value(AgentBreakdownModel::kE2eP95, shown), summary.e2e.p95_s);
    QCOMPARE(AgentBreakdownModel::value(AgentBreakdownModel::kFirstTokenP50, shown),
             summary.ttft.p50_s);
    QVERIFY(std::abs(AgentBreakdownModel::value(AgentBreakdownModel::kPathTotal, shown) -
                     summary.e2e.mean_s) < 1e-6);
    QCOMPARE(model->data(model->index(AgentBreakdownModel::kE2eP99, 1)).toString(),
             QString::number(summary.e2e.p99_s, 'f', 3));

    // The stacked bar: one block per kind, the summary's seconds.
    QHorizontalStackedBarSeries* series = bars_of(w.agents_view()->breakdown_chart());
    QVERIFY(series);
    QCOMPARE(series->count(), int(AgentBreakdownModel::kPathRows.size()));
    const QList<QBarSet*> sets = series->barSets();
    QCOMPARE(sets[0]->count(), 1);
    QVERIFY(std::abs(sets[0]->at(0) - summary.path.llm_queue_s) < kEps);
    QVERIFY(std::abs(sets[2]->at(0) - summary.path.decode_s) < kEps);
    QVERIFY(std::abs(sets[4]->at(0) - summary.path.tool_s) < kEps);
  }

  void baseline_holds_the_previous_agent_run() {
    MainWindow w;
    QVERIFY(run_agents(w, "agent-multi-parallel.json", 3));
    const double parallel_p50_s = w.shown_result()->result.sessions->e2e.p50_s;
    QVERIFY(run_agents(w, "agent-multi-serial.json", 3));
    const double serial_p50_s = w.shown_result()->result.sessions->e2e.p50_s;
    QVERIFY(serial_p50_s > parallel_p50_s);  // five sub-agents one after another

    AgentBreakdownModel* model = w.agent_breakdown_model();
    QCOMPARE(model->runs().size(), size_t{2});
    QVERIFY(model->current()->name.startsWith(QStringLiteral("agent-multi-serial")));
    QVERIFY(model->baseline()->name.startsWith(QStringLiteral("agent-multi-parallel")));
    QCOMPARE(model->columnCount(), 3);
    QCOMPARE(AgentBreakdownModel::value(AgentBreakdownModel::kE2eP50, model->current()->summary),
             serial_p50_s);
    QCOMPARE(AgentBreakdownModel::value(AgentBreakdownModel::kE2eP50, model->baseline()->summary),
             parallel_p50_s);
    const QStringList categories = categories_of(w.agents_view()->breakdown_chart());
    QCOMPARE(categories.size(), 2);
    QVERIFY(categories[0].startsWith(QStringLiteral("baseline: agent-multi-parallel")));
    QVERIFY(categories[1].startsWith(QStringLiteral("current: agent-multi-serial")));

    // Pinned, the baseline stays while the next run replaces the current one.
    w.agents_view()->pin_baseline()->setChecked(true);
    QVERIFY(run_agents(w, "agent-multi-serial.json", 2));
    QVERIFY(model->baseline()->name.startsWith(QStringLiteral("agent-multi-parallel")));
    QCOMPARE(model->current()->summary.sessions, uint64_t{2});

    // A run without agent sessions: a note, and the agent runs are kept for the next one.
    QVERIFY(w.open_template(test::scenario_path("quickstart.json")));
    w.document()->set_value("workload.num_requests", nlohmann::json(50));
    QSignalSpy finished(w.runner(), &SimulationRunner::finished);
    QVERIFY(w.run());
    QVERIFY(finished.wait(60000));
    QVERIFY(!w.agents_view()->has_sessions());
    QVERIFY(w.agents_view()->note().contains(QStringLiteral("no agent sessions")));
    QCOMPARE(w.session_gantt_model()->rowCount(), 0);
    QCOMPARE(model->runs().size(), size_t{2});
  }

  void the_recorder_keeps_a_bounded_number_of_sessions() {
    RunRecorder recorder(std::make_shared<std::atomic<bool>>(false), MetricsOptions{}, nullptr, 10,
                         2);
    SessionRecord r;
    r.trace_json = "{}";
    QVERIFY(recorder.wants_session_spans());
    for (uint64_t id = 0; id < 5; ++id) {
      r.id = id;
      recorder.on_session_done(r);
    }
    QCOMPARE(recorder.sessions().size(), size_t{2});
    QCOMPARE(recorder.sessions()[1].id, uint64_t{1});
    QVERIFY(recorder.sessions()[0].trace_json.empty());
    QVERIFY(!recorder.wants_session_spans());  // enough kept: later sessions record none
  }

 private:
  // Rows in order of start; bars that add up to their spans; the critical ones back to back
  // from the session's start to its end, one search and one reader of the five among them.
  void check_rows(const SessionGanttModel& model) {
    const SessionRecord& r = *model.session();
    QCOMPARE(model.rowCount(), static_cast<int>(r.spans.size()));
    QCOMPARE(model.rowCount(), r.llm_calls + r.tool_calls);  // no caches in this scenario
    QCOMPARE(model.data(model.index(0, SessionGanttModel::kStep)).toString(),
             QStringLiteral("plan"));
    QCOMPARE(model.data(model.index(model.rowCount() - 1, SessionGanttModel::kStep)).toString(),
             QStringLiteral("synthesize"));
    double previous_start_s = 0;
    double critical_end_s = 0;
    int critical_tools = 0;
    int critical_llm = 0;
    for (int row = 0; row < model.rowCount(); ++row) {
      const SessionSpan& s = model.span(row);
      const SessionGanttModel::Bar bar = model.bar(row);
      QVERIFY(bar.start_s >= previous_start_s);
      previous_start_s = bar.start_s;
      QVERIFY(std::abs(bar.end_s() - (s.end_s - r.start_s)) < 1e-9);
      if (s.kind == SpanKind::kLlm) {
        QCOMPARE(bar.part_s[SessionGanttModel::kQueue], s.queue_s);
        QCOMPARE(bar.part_s[SessionGanttModel::kDecode], s.decode_s);
        QVERIFY(bar.part_s[SessionGanttModel::kDecode] > 0);
      }
      QCOMPARE(model.data(model.index(row, SessionGanttModel::kCritical)).toString().isEmpty(),
               !s.critical);
      if (!s.critical) continue;
      QVERIFY(std::abs(bar.start_s - critical_end_s) < 1e-9);  // back to back
      critical_end_s = bar.end_s();
      (s.kind == SpanKind::kTool ? critical_tools : critical_llm) += 1;
    }
    QVERIFY(std::abs(critical_end_s - r.e2e_s()) < 1e-9);
    QCOMPARE(critical_tools, 1);
    QCOMPARE(critical_llm, 3);  // plan, one reader, synthesize
  }
};

SERVESIM_GUI_TEST(AgentsViewTest);

}  // namespace servesim::gui

#include "agents_view_test.moc"
