#include "gui/main_window.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QKeySequence>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QToolBar>
#include <QVBoxLayout>
#include <algorithm>

#include "gui/agent_breakdown_model.h"
#include "gui/agents_view.h"
#include "gui/compare_controller.h"
#include "gui/compare_model.h"
#include "gui/compare_view.h"
#include "gui/csv_export.h"
#include "gui/diagnosis_view.h"
#include "gui/error_style.h"
#include "gui/latency_cdf_model.h"
#include "gui/latency_view.h"
#include "gui/memory_plan_model.h"
#include "gui/memory_view.h"
#include "gui/scenario_document.h"
#include "gui/scenario_editor.h"
#include "gui/session_gantt_model.h"
#include "gui/simulation_runner.h"
#include "gui/summary_model.h"
#include "gui/time_breakdown_model.h"
#include "gui/time_breakdown_view.h"
#include "gui/timeline_model.h"
#include "gui/timeline_view.h"
#include "gui/tradeoff_controller.h"
#include "gui/tradeoff_model.h"
#include "gui/tradeoff_view.h"
#include "sim/run/simulation.h"
#include "sim/scenario/scenario.h"

namespace servesim::gui {
namespace {

constexpr int kMaxRecentFiles = 8;
const char* const kRecentKey = "files/recent";
const char* const kGeometryKey = "window/geometry";
const char* const kStateKey = "window/state";

// Single-quoted for a POSIX shell when it holds anything the shell would split or expand.
QString shell_quote(QString word) {
  static const QString kSpecial = QStringLiteral(" '\"$`\\*?[]{}()<>|&;~#!");
  if (std::none_of(word.begin(), word.end(), [](QChar c) { return kSpecial.contains(c); })) {
    return word;
  }
  word.replace(QStringLiteral("'"), QStringLiteral("'\\''"));
  return QLatin1Char('\'') + word + QLatin1Char('\'');
}

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      document_(new ScenarioDocument(this)),
      runner_(new SimulationRunner(this)),
      summary_model_(new SummaryModel(this)),
      memory_model_(new MemoryPlanModel(document_->catalog().gpus(), this)),
      timeline_model_(new TimelineModel(this)),
      latency_model_(new LatencyCdfModel(this)),
      time_breakdown_model_(new TimeBreakdownModel(this)),
      session_gantt_model_(new SessionGanttModel(this)),
      agent_breakdown_model_(new AgentBreakdownModel(this)) {
  setObjectName(QStringLiteral("servesim_main_window"));
  editor_ = new ScenarioEditor(document_, this);
  auto* dock = new QDockWidget(tr("Scenario"), this);
  dock->setObjectName(QStringLiteral("scenario_dock"));
  dock->setWidget(editor_);
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  addDockWidget(Qt::LeftDockWidgetArea, dock);

  tradeoffs_ = new TradeoffController(document_, this);
  compare_ = new CompareController(
      &document_->catalog(), [this] { return shown_; }, bundled_scenarios_dir(), this);
  build_centre();
  build_status_bar();
  ToolbarActions toolbar;
  build_file_menu(&toolbar);
  build_simulation_menu(&toolbar);
  build_view_menu();
  build_toolbar(toolbar);
  set_busy(false);
  connect_signals();

  resize(1280, 800);
  QSettings settings;
  restoreGeometry(settings.value(kGeometryKey).toByteArray());
  restoreState(settings.value(kStateKey).toByteArray());
  on_document_changed();
}

MainWindow::~MainWindow() = default;

QString MainWindow::bundled_scenarios_dir() {
  return QDir(QString::fromStdString(Catalog().config_dir())).filePath(QStringLiteral("scenarios"));
}

void MainWindow::build_centre() {
  summary_view_ = new QTableView(this);
  summary_view_->setModel(summary_model_);
  summary_view_->horizontalHeader()->setSectionResizeMode(SummaryModel::kMetric,
                                                          QHeaderView::Stretch);
  summary_view_->verticalHeader()->hide();
  summary_view_->setAlternatingRowColors(true);

  diagnosis_view_ = new DiagnosisView(this);
  auto* summary_page = new QSplitter(Qt::Horizontal, this);
  summary_page->addWidget(summary_view_);
  summary_page->addWidget(diagnosis_view_);
  summary_page->setStretchFactor(0, 3);
  summary_page->setStretchFactor(1, 2);

  tabs_ = new QTabWidget(this);
  tabs_->addTab(summary_page, tr("Summary"));
  tabs_->addTab(new MemoryView(memory_model_, this), tr("Memory"));
  tabs_->addTab(new TimelineView(timeline_model_, this), tr("Timeline"));
  tabs_->addTab(new LatencyView(latency_model_, this), tr("Latency"));
  tabs_->addTab(new TimeBreakdownView(time_breakdown_model_, this), tr("Where time goes"));
  tabs_->addTab(tradeoffs_->view(), tr("Trade-offs"));
  tabs_->addTab(compare_->view(), tr("Compare"));
  agents_view_ = new AgentsView(session_gantt_model_, agent_breakdown_model_, this);
  tabs_->addTab(agents_view_, tr("Agents"));

  banner_ = new QLabel(tr("Edit the scenario on the left, then Run (Ctrl+R)."), this);
  banner_->setWordWrap(true);
  banner_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  banner_->setObjectName(QStringLiteral("run_banner"));
  auto* centre = new QWidget(this);
  auto* centre_layout = new QVBoxLayout(centre);
  centre_layout->setContentsMargins(4, 4, 4, 4);
  centre_layout->addWidget(banner_);
  centre_layout->addWidget(tabs_, 1);
  setCentralWidget(centre);
}

void MainWindow::build_status_bar() {
  status_ = new QLabel(this);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 1000);
  progress_->setMaximumWidth(240);
  progress_->setTextVisible(true);
  cancel_button_ = new QPushButton(tr("Cancel"), this);
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_button_);
  connect(cancel_button_, &QPushButton::clicked, this, &MainWindow::cancel_run);
}

void MainWindow::build_file_menu(ToolbarActions* toolbar) {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  bundled_menu_ = file->addMenu(tr("&New from bundled scenario"));
  connect(bundled_menu_, &QMenu::aboutToShow, this, &MainWindow::fill_bundled_menu);
  QAction* open = file->addAction(tr("&Open…"), this, &MainWindow::open_dialog);
  open->setShortcut(QKeySequence::Open);
  recent_menu_ = file->addMenu(tr("Open &recent"));
  connect(recent_menu_, &QMenu::aboutToShow, this, &MainWindow::fill_recent_menu);
  QAction* save = file->addAction(tr("&Save"), this, &MainWindow::save_action);
  save->setShortcut(QKeySequence::Save);
  QAction* save_as = file->addAction(tr("Save &as…"), this, &MainWindow::save_as_action);
  save_as->setShortcut(QKeySequence::SaveAs);
  file->addSeparator();
  QAction* png = file->addAction(tr("Export chart as &PNG…"), this, &MainWindow::export_png_action);
  png->setShortcut(QKeySequence(tr("Ctrl+E")));
  QAction* csv = file->addAction(tr("Export data as &CSV…"), this, &MainWindow::export_csv_action);
  csv->setShortcut(QKeySequence(tr("Ctrl+Shift+E")));
  QAction* cli = file->addAction(tr("Copy CLI &command"), this, &MainWindow::copy_cli_command);
  cli->setShortcut(QKeySequence(tr("Ctrl+Shift+C")));
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
  toolbar->file = {open, save};
  toolbar->output = {png, csv, cli};
}

void MainWindow::build_simulation_menu(ToolbarActions* toolbar) {
  QMenu* sim = menuBar()->addMenu(tr("&Simulation"));
  run_action_ = sim->addAction(tr("&Run"), this, [this] { run(); });
  run_action_->setObjectName(QStringLiteral("run_action"));
  run_action_->setShortcuts({QKeySequence(tr("Ctrl+R")), QKeySequence(Qt::Key_F5)});
  // One Cancel (Esc) for whatever is running: the run, the sweep, the comparison runs.
  cancel_action_ = sim->addAction(tr("&Cancel"), this, &MainWindow::cancel_all);
  cancel_action_->setObjectName(QStringLiteral("cancel_action"));
  cancel_action_->setShortcut(QKeySequence(Qt::Key_Escape));
  sim->addSeparator();
  QAction* sweep = sim->addAction(tr("Run &sweep"), this, [this] {
    tabs_->setCurrentIndex(kTradeoffsTab);
    tradeoffs_->run_sweep();
  });
  sweep->setObjectName(QStringLiteral("sweep_action"));
  sweep->setShortcut(QKeySequence(tr("Ctrl+Shift+R")));
  QAction* add = sim->addAction(tr("&Add result to comparison"), this, [this] {
    tabs_->setCurrentIndex(kCompareTab);
    compare_->add_shown_result();
  });
  add->setObjectName(QStringLiteral("compare_add_action"));
  add->setShortcut(QKeySequence(tr("Ctrl+Shift+A")));
  QAction* compare =
      sim->addAction(tr("C&ompare scenario files…"), compare_, &CompareController::open_dialog);
  compare->setObjectName(QStringLiteral("compare_open_action"));
  compare->setShortcut(QKeySequence(tr("Ctrl+Shift+O")));
  QAction* open_folder = sim->addAction(tr("Open run &folder for comparison…"), compare_,
                                        &CompareController::open_folder_dialog);
  open_folder->setObjectName(QStringLiteral("compare_open_folder_action"));
  toolbar->simulation = {run_action_, cancel_action_, sweep, add};
}

void MainWindow::build_view_menu() {
  QMenu* view = menuBar()->addMenu(tr("&View"));
  for (int t = 0; t < kTabCount; ++t) {
    QAction* a = view->addAction(tabs_->tabText(t), this, [this, t] { tabs_->setCurrentIndex(t); });
    a->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + t)));
  }
}

void MainWindow::build_toolbar(const ToolbarActions& actions) {
  QToolBar* bar = addToolBar(tr("Main"));
  bar->setObjectName(QStringLiteral("main_toolbar"));
  bar->addActions(actions.file);
  bar->addSeparator();
  bar->addActions(actions.simulation);
  bar->addSeparator();
  bar->addActions(actions.output);
}

void MainWindow::connect_signals() {
  connect(document_, &ScenarioDocument::changed, this, &MainWindow::on_document_changed);
  connect(runner_, &SimulationRunner::progress, this, &MainWindow::on_progress);
  connect(runner_, &SimulationRunner::finished, this, &MainWindow::on_run_finished);
  connect(runner_, &SimulationRunner::failed, this, &MainWindow::on_run_failed);
  connect(runner_, &SimulationRunner::cancelled, this, &MainWindow::on_run_cancelled);
  connect(tradeoffs_, &TradeoffController::busy_changed, this, &MainWindow::update_cancel_action);
  connect(tradeoffs_, &TradeoffController::status_message, status_, &QLabel::setText);
  connect(compare_, &CompareController::busy_changed, this, &MainWindow::update_cancel_action);
  connect(compare_, &CompareController::files_chosen, this,
          [this] { tabs_->setCurrentIndex(kCompareTab); });
}

bool MainWindow::open_file(const QString& path) {
  QString error;
  if (!document_->load(path, &error)) {
    status_->setText(error);
    return false;
  }
  remember_file(document_->path());
  status_->setText(tr("Opened %1").arg(QDir::toNativeSeparators(document_->path())));
  return true;
}

bool MainWindow::open_template(const QString& path) {
  QString error;
  if (!document_->load_template(path, &error)) {
    status_->setText(error);
    return false;
  }
  status_->setText(tr("New scenario from %1").arg(QFileInfo(path).fileName()));
  return true;
}

bool MainWindow::save_to(const QString& path) {
  QString error;
  if (!document_->save(path, &error)) {
    status_->setText(error);
    return false;
  }
  remember_file(document_->path());
  status_->setText(tr("Saved %1").arg(QDir::toNativeSeparators(document_->path())));
  return true;
}

bool MainWindow::run() {
  const std::optional<Scenario>& scenario = document_->scenario();
  if (!scenario) {
    show_banner(tr("Cannot run: %1").arg(document_->error()), true);
    return false;
  }
  const uint64_t job = runner_->start(scenario->config, scenario->name);
  edited_since_run_ = false;
  set_busy(true);
  progress_->setValue(0);
  status_->setText(
      tr("Running %1 (run #%2)…").arg(QString::fromStdString(scenario->name)).arg(job));
  return true;
}

void MainWindow::cancel_run() {
  if (!runner_->busy()) return;
  runner_->cancel();
  status_->setText(tr("Cancelling…"));
}

void MainWindow::on_progress(quint64 job, double fraction, double sim_time_s) {
  if (fraction < 0) {
    progress_->setRange(0, 0);  // busy indicator: the workload has no known total
  } else {
    progress_->setRange(0, 1000);
    progress_->setValue(static_cast<int>(fraction * 1000));
  }
  status_->setText(tr("Run #%1: %2 s simulated").arg(job).arg(sim_time_s, 0, 'f', 0));
}

void MainWindow::on_run_finished(std::shared_ptr<const RunSnapshot> snapshot) {
  set_busy(false);
  shown_ = snapshot;
  const SimulationResult& r = snapshot->result;
  summary_model_->set_summary(r.summary, snapshot->slo);
  timeline_model_->set_points(snapshot->timeline);
  latency_model_->set_data(snapshot->cdf, r.summary);
  time_breakdown_model_->set_breakdown(r.summary.time);
  diagnosis_view_->set_findings(snapshot->diagnosis);
  show_agent_sessions(snapshot);
  show_banner(tr("Run #%1: %2 requests completed in %3 s simulated (%4 s wall); fingerprint %5")
                  .arg(snapshot->job)
                  .arg(r.summary.completed)
                  .arg(r.simulated_s, 0, 'f', 1)
                  .arg(snapshot->wall_s, 0, 'f', 2)
                  .arg(QString::fromStdString(r.fingerprint)),
              false);
  status_->setText(tr("Run #%1 finished").arg(snapshot->job));
}

void MainWindow::show_agent_sessions(const std::shared_ptr<const RunSnapshot>& snapshot) {
  const std::optional<SessionSummary>& sessions = snapshot->result.sessions;
  if (!sessions) {
    session_gantt_model_->clear();
    agents_view_->set_has_sessions(false);
    return;
  }
  // The run number tells two runs of one scenario apart in the side-by-side bars.
  agent_breakdown_model_->add_run(
      tr("%1 (run #%2)").arg(QString::fromStdString(snapshot->name)).arg(snapshot->job), *sessions);
  // Aliasing: the model shares the snapshot's records instead of copying them.
  session_gantt_model_->set_sessions(
      std::shared_ptr<const std::vector<SessionRecord>>(snapshot, &snapshot->sessions));
  agents_view_->set_has_sessions(true);
}

void MainWindow::on_run_failed(quint64 job, const QString& message) {
  set_busy(false);
  show_banner(tr("Run #%1 failed: %2").arg(job).arg(message), true);
  status_->setText(tr("Run #%1 failed").arg(job));
}

void MainWindow::on_run_cancelled(quint64 job) {
  set_busy(false);
  status_->setText(tr("Run #%1 cancelled; the views keep the previous result").arg(job));
}

void MainWindow::set_busy(bool busy) {
  progress_->setVisible(busy);
  cancel_button_->setVisible(busy);
  if (!busy) progress_->setRange(0, 1000);
  update_cancel_action();
}

void MainWindow::update_cancel_action() {
  cancel_action_->setEnabled(runner_->busy() || tradeoffs_->busy() || compare_->busy());
}

void MainWindow::cancel_all() {
  cancel_run();
  tradeoffs_->cancel();
  compare_->cancel();
}

void MainWindow::show_banner(const QString& text, bool error) {
  banner_->setText(text);
  banner_->setStyleSheet(error ? error_text_style(/*bold=*/true) : QString());
}

QString MainWindow::banner_text() const {
  return banner_->text();
}

void MainWindow::on_document_changed() {
  update_title();
  const std::optional<Scenario>& scenario = document_->scenario();
  run_action_->setEnabled(scenario.has_value());
  run_action_->setToolTip(scenario ? tr("Run the scenario (Ctrl+R)") : document_->error());
  if (shown_ && !edited_since_run_ && runner_->current_job() != 0) {
    edited_since_run_ = true;
    show_banner(banner_->text() + tr(" — the scenario has been edited since."), false);
  }
  memory_model_->compute(scenario ? &scenario->config : nullptr);
}

void MainWindow::update_title() {
  const QString name =
      document_->path().isEmpty() ? tr("untitled") : QFileInfo(document_->path()).fileName();
  setWindowTitle(QStringLiteral("%1[*] — servesim").arg(name));
  setWindowModified(document_->modified());
}

void MainWindow::remember_file(const QString& path) {
  QSettings settings;
  QStringList recent = settings.value(kRecentKey).toStringList();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > kMaxRecentFiles) recent.removeLast();
  settings.setValue(kRecentKey, recent);
}

void MainWindow::fill_recent_menu() {
  recent_menu_->clear();
  const QStringList recent = QSettings().value(kRecentKey).toStringList();
  for (const QString& path : recent) {
    recent_menu_->addAction(QDir::toNativeSeparators(path), this, [this, path] {
      if (maybe_save()) open_file(path);
    });
  }
  recent_menu_->setEnabled(!recent.isEmpty());
}

void MainWindow::fill_bundled_menu() {
  bundled_menu_->clear();
  const QDir dir(bundled_scenarios_dir());
  for (const QString& name : dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name)) {
    const QString path = dir.filePath(name);
    bundled_menu_->addAction(QFileInfo(name).completeBaseName(), this, [this, path] {
      if (maybe_save()) open_template(path);
    });
  }
}

bool MainWindow::maybe_save() {
  if (!document_->modified()) return true;
  const auto answer = QMessageBox::question(
      this, tr("Unsaved scenario"), tr("The scenario has unsaved edits. Save them?"),
      QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
  if (answer == QMessageBox::Cancel) return false;
  if (answer == QMessageBox::Save) return save_action();
  return true;
}

void MainWindow::open_dialog() {
  if (!maybe_save()) return;
  const QString start =
      document_->path().isEmpty() ? bundled_scenarios_dir() : QFileInfo(document_->path()).path();
  const QString path = QFileDialog::getOpenFileName(this, tr("Open scenario"), start,
                                                    tr("Scenario files (*.json);;All files (*)"));
  if (!path.isEmpty()) open_file(path);
}

bool MainWindow::save_action() {
  if (document_->path().isEmpty()) return save_as_action();
  return save_to(document_->path());
}

bool MainWindow::save_as_action() {
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Save scenario"), document_->base_dir(), tr("Scenario files (*.json)"));
  return !path.isEmpty() && save_to(path);
}

QAbstractItemModel* MainWindow::tab_model(Tab tab) const {
  switch (tab) {
    case kSummaryTab:
      return summary_model_;
    case kMemoryTab:
      return memory_model_;
    case kTimelineTab:
      return timeline_model_;
    case kLatencyTab:
      return latency_model_;
    case kWhereTimeTab:
      return time_breakdown_model_;
    case kTradeoffsTab:
      return tradeoffs_->model();
    case kCompareTab:
      return compare_->model();
    case kAgentsTab:
      return session_gantt_model_;
    case kTabCount:
      break;
  }
  return nullptr;
}

bool MainWindow::export_png(Tab tab, const QString& path) {
  QWidget* page = tabs_->widget(tab);
  if (!page) return false;
  // Only the current tab is laid out at its real size: show what is exported.
  tabs_->setCurrentIndex(tab);
  if (!page->grab().save(path, "PNG")) {
    status_->setText(tr("Cannot write '%1'").arg(path));
    return false;
  }
  status_->setText(tr("Wrote %1").arg(QDir::toNativeSeparators(path)));
  return true;
}

bool MainWindow::export_csv(Tab tab, const QString& path) {
  QString error;
  if (!write_csv(*tab_model(tab), path, &error)) {
    status_->setText(error);
    return false;
  }
  status_->setText(tr("Wrote %1").arg(QDir::toNativeSeparators(path)));
  return true;
}

void MainWindow::export_png_action() {
  const auto tab = static_cast<Tab>(tabs_->currentIndex());
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export chart"), tabs_->tabText(tab).toLower() + QStringLiteral(".png"),
      tr("PNG images (*.png)"));
  if (!path.isEmpty()) export_png(tab, path);
}

void MainWindow::export_csv_action() {
  const auto tab = static_cast<Tab>(tabs_->currentIndex());
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export data"), tabs_->tabText(tab).toLower() + QStringLiteral(".csv"),
      tr("CSV files (*.csv)"));
  if (!path.isEmpty()) export_csv(tab, path);
}

QString MainWindow::cli_command() const {
  const QString path = shell_quote(document_->path().isEmpty() ? QStringLiteral("SCENARIO.json")
                                                               : document_->path());
  if (tabs_->currentIndex() == kTradeoffsTab) {
    return QStringLiteral("servesim sweep %1 --vary %2")
        .arg(path, shell_quote(tradeoffs_->view()->key() + QLatin1Char('=') +
                               tradeoffs_->view()->values()));
  }
  return QStringLiteral("servesim simulate ") + path;
}

void MainWindow::copy_cli_command() {
  QApplication::clipboard()->setText(cli_command());
  if (document_->path().isEmpty() || document_->modified()) {
    status_->setText(tr("Copied; save the scenario first so the CLI runs what you see"));
  } else {
    status_->setText(tr("Copied: %1").arg(cli_command()));
  }
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!maybe_save()) {
    event->ignore();
    return;
  }
  QSettings settings;
  settings.setValue(kGeometryKey, saveGeometry());
  settings.setValue(kStateKey, saveState());
  event->accept();
}

}  // namespace servesim::gui
